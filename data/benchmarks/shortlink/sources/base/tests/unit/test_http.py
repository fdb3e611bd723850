from __future__ import annotations

from shortlink.http import App, Request, Response


def make_app() -> App:
    app = App()

    @app.route("GET", "/ping")
    def ping(request: Request) -> Response:
        return Response(200, {"pong": True})

    @app.route("GET", "/items/{name}")
    def item(request: Request) -> Response:
        return Response(200, {"name": request.params["name"]})

    return app


def test_dispatches_by_method_and_path() -> None:
    assert make_app().handle("GET", "/ping") == Response(200, {"pong": True})


def test_path_parameters_are_passed_to_the_handler() -> None:
    assert make_app().handle("GET", "/items/abc").body == {"name": "abc"}


def test_unknown_path_is_404_and_wrong_method_is_405() -> None:
    assert make_app().handle("GET", "/nope/x/y").status == 404
    assert make_app().handle("POST", "/ping").status == 405
