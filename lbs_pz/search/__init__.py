"""Search: beliefs over a seat's own hand (`beliefs`: exact, grounded, learned, filtered),
blueprint rollouts over sampled worlds (`rollout_search`), values (`value`), the one
search configuration (`config`: SearchConfig) and the one place that resolves it for a
blueprint (`resolve`), the agents built on them (`agents`: SpartaAgent, LBSAgent),
methods by name (`methods`: parse_method, MethodSpec) and a method built into agents
once per process (`build`: build_agent, built_agents, describe, made_with);
`stats.mean_sem` is the one mean +- s.e.m. helper.
Nothing heavy is imported here: `from lbs_pz.search.agents import LBSAgent`."""
