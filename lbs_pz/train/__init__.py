"""Trainers (torch), end-of-line code imported by nothing but the CLI. One training loop
(`lbs_pz.train.loop.run`: budget, resume, checkpoints, learning curve, evaluation hooks,
progress bar, Ctrl-C) drives four trainers, each a function of one hyper-parameter
dataclass (`lbs_pz.train.configs`, which needs no torch):

    train_belief(BeliefTrainConfig(blueprint=SPEC, ...))      lbs_pz.train.belief
    train_value(ValueTrainConfig(blueprint=SPEC, ...))        lbs_pz.train.value
    train_blueprint(BlueprintTrainConfig(...))                lbs_pz.train.blueprint
    distill(DistillConfig(teacher=SPEC, ...))                 lbs_pz.train.distill

Each writes a checkpoint in the one lbs_pz layout (`lbs_pz.models.checkpoint`) and draws
its games from the TRAIN deal stream; `lbs_pz.train.common` holds what they share. A
belief or a value is trained FOR a blueprint (any spec: NAME, sb3:PATH, lstm:PATH,
py:FILE.py:CLASS) and records it (`trained_for`).
"""
