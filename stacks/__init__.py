"""CDK stacks for trncost: one module per capability, wired by `stacks.stage.TrncostStage`."""
