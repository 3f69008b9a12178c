"""Search: beliefs over a seat's own hand (exact, grounded, learned); SPARTA and LBS build
on them. Nothing heavy is imported here: `from lbs_pz.search.beliefs import ...`."""
