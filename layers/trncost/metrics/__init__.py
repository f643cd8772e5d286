"""Trial metrics: job events, SageMaker job facts, CloudWatch GetMetricData batching, Neuron and
GPU metric mapping, and the trial record they add up to. boto3 only in the adapters here."""
