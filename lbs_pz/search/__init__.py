"""Search: beliefs over a seat's own hand (`beliefs`: exact, grounded, learned, filtered),
blueprint rollouts over sampled worlds (`rollout_search`), values (`value`), and the
agents built on them (`agents`: SpartaAgent, LBSAgent with defaults that never make a
blueprint worse silently); `stats.mean_sem` is the one mean +- s.e.m. helper.
Nothing heavy is imported here: `from lbs_pz.search.agents import LBSAgent`."""
