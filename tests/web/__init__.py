"""Tests of lbs_pz.web: the page's API through Starlette's TestClient and the page in a real
browser."""
