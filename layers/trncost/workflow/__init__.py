"""The trial workflow's pure parts: a trial plan run by Step Functions, fit ─gate─► baseline
─gate─► target.

- `plan`: the TrialPlan model and the order of its runs (the schedule);
- `gates`: pure pass/fail rules over trial records, with reasons;
- `budget`: spend so far and whether the next launch could exceed the cap;
- `state_machine.asl.json` + `definition`: the one state machine definition (CDK and tests).

What the state machine's task Lambda does is `trncost.services.trial_steps`; a plan's status,
runs and gate results are stored by `trncost.store.plans`.
"""
