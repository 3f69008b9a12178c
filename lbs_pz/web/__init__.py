"""The local web page: watch games, see what a search weighed, replay records and play
with any blueprint (`lbs-pz serve`). `lbs_pz.web.app.create_app` builds the Starlette app;
`lbs_pz.web.games` holds the game sessions. Needs the [web] extra (starlette, uvicorn);
nothing is imported here, so `import lbs_pz.web` stays light."""
