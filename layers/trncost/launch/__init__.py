"""Trial launchers: SageMaker CreateTrainingJob, EC2 RunInstances, Batch SubmitJob, behind one
protocol (`base.Launcher`). boto3 lives in the adapters; `support` is pure."""
