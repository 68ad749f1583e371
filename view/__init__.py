"""The live view: a web page that shows a running network and replays a finished run (view/README.md)."""
