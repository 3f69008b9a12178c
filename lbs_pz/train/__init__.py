"""Trainers (torch), end-of-line code imported by nothing but the CLI. Each is a function of
one hyper-parameter dataclass, writes a checkpoint in the one lbs_pz layout
(`lbs_pz.models.checkpoint`) and draws its games from the TRAIN deal stream:

    train_belief(BeliefTrainConfig(blueprint=SPEC, ...))      lbs_pz.train.belief
    train_value(ValueTrainConfig(blueprint=SPEC, ...))        lbs_pz.train.value
    train_blueprint(BlueprintTrainConfig(...))                lbs_pz.train.blueprint

A belief or a value is trained FOR a blueprint (any spec: NAME, sb3:PATH, lstm:PATH,
py:FILE.py:CLASS) and records it (`trained_for`).
"""
