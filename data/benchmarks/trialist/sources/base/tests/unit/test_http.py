from __future__ import annotations

from trialist.http import App, Request, Response


def make_app() -> App:
    app = App()

    @app.route("GET", "/ping")
    def ping(request: Request) -> Response:
        return Response(200, {"pong": True, "agent": request.header("User-Agent")})

    return app


def test_dispatches_by_method_and_path() -> None:
    resp = make_app().handle("GET", "/ping", {"User-Agent": "pytest"}, b"")
    assert resp == Response(200, {"pong": True, "agent": "pytest"})


def test_unknown_path_is_404() -> None:
    assert make_app().handle("GET", "/nope").status == 404


def test_known_path_with_wrong_method_is_405() -> None:
    assert make_app().handle("POST", "/ping").status == 405


def test_request_json_decodes_the_body() -> None:
    assert Request("POST", "/x", {}, b'{"a": 1}').json() == {"a": 1}
