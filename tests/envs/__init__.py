"""Tests of lbs_pz.envs and lbs_pz.wrappers: the PettingZoo env, the Gymnasium self-play env,
the SB3 VecEnv and the public/private split."""
