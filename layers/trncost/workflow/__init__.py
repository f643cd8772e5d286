"""The trial workflow's pure parts: a trial plan run by Step Functions, fit ─gate─► baseline
─gate─► target.

- the TrialPlan model and the order of its runs (the schedule) are the domain's:
  `trncost.model.plan`, with which launcher takes which instance type (`trncost.model.launchers`);
- `gates`: pure pass/fail rules over trial records, with reasons;
- `budget`: spend so far and whether the next launch could exceed the cap;
- `state_machine.asl.json` + `definition`: the one state machine definition (CDK and tests).

What the state machine's task Lambda does is `trncost.services.trial_steps`; a plan's status,
runs and gate results (`trncost.model.plan`) are stored by `trncost.store.plans`.
"""
