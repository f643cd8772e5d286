"""trncost: what it costs to reach a training target on AWS Trainium3, from your own trials
and official AWS prices, every number traceable."""

__version__ = "0.2.0"
