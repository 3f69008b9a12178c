"""Training code (torch): the learned belief (`lbs_pz.train.belief`)."""
