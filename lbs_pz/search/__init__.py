"""Search: beliefs over a seat's own hand (`beliefs`: exact, grounded, learned, filtered),
blueprint rollouts over sampled worlds (`rollout_search`), values (`value`), the one
search configuration and the one place that resolves it for a blueprint (`config`:
SearchConfig, resolve), the agents built on them (`agents`: SpartaAgent, LBSAgent), and
methods by name for compare, search-games and the page (`methods`: MethodSpec,
build_agent); `stats.mean_sem` is the one mean +- s.e.m. helper.
Nothing heavy is imported here: `from lbs_pz.search.agents import LBSAgent`."""
