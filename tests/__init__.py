"""The test suite, one package per layer of lbs_pz (engine -> models -> agents -> search ->
envs, wrappers -> eval, train -> web -> cli), plus core/ (what every layer shares), repo/
(the repository itself) and helpers/ (what the tests share)."""
