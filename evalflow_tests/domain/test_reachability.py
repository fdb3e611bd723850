from __future__ import annotations

from evalflow.domain import reachability
from evalflow.domain.reachability import (
    UNLOADED,
    UNREACHED,
    ScriptFile,
    is_entry_config,
    module_name,
    python_reach,
    script_reach,
)

APP = "from fastapi import FastAPI\nfrom .api.papers import router\napp = FastAPI()\n"
STUB = "def ingest(url):\n    return {'paper_id': '123'}\n"
REAL = "import arxiv\n\ndef ingest(url):\n    return arxiv.Search(url)\n"


def test_a_nested_dead_copy_is_unreached_and_the_live_app_is_reached() -> None:
    reach = python_reach(
        {
            "p/backend/__init__.py": "",
            "p/backend/main.py": APP,
            "p/backend/api/__init__.py": "",
            "p/backend/api/papers.py": STUB,
            "p/p/backend/__init__.py": "",
            "p/p/backend/api/__init__.py": "",
            "p/p/backend/api/papers.py": REAL,
        }
    )
    assert reach.off is None
    assert reach.roots == ("p/backend/main.py",)
    # The relative import resolves exactly: the copy's `api.papers` is not the app's.
    assert not reach.unreached("p/backend/api/papers.py")
    assert not reach.unreached("p/backend/__init__.py")  # the package the app lies in
    assert reach.unreached("p/p/backend/api/papers.py")
    assert not reach.unreached("p/frontend/app.js")  # not Python: never unreached


def test_without_an_application_root_the_rule_is_off() -> None:
    reach = python_reach({"lib/core.py": REAL, "lib/__init__.py": "from .core import ingest\n"})
    assert reach.off is not None and "no application entry point" in reach.off
    assert not reach.unreached("lib/core.py")


def test_a_module_named_in_a_string_is_an_edge() -> None:
    files = {
        "run.py": "import uvicorn\nif __name__ == '__main__':\n    uvicorn.run('svc.app:app')\n",
        "svc/__init__.py": "",
        "svc/app.py": "x = 1\n",
        "svc/routers/users.py": REAL,
        "svc/wire.py": "ROUTERS = ['svc.routers.users']\n",
    }
    reach = python_reach(files)
    assert not reach.unreached("svc/app.py")
    assert reach.unreached("svc/routers/users.py")
    files["svc/app.py"] = "import importlib\nm = importlib.import_module('svc.routers.users')\n"
    assert not python_reach(files).unreached("svc/routers/users.py")


def test_a_dynamic_import_of_a_computed_name_turns_the_rule_off() -> None:
    files = {
        "main.py": "import importlib\nif __name__ == '__main__':\n"
        "    for n in NAMES:\n        importlib.import_module(n)\n",
        "plugins/a.py": REAL,
    }
    reach = python_reach(files)
    assert reach.off is not None and "import_module() loads code named at run time" in reach.off
    assert not reach.unreached("plugins/a.py")
    # In a file nothing runs, the same call changes nothing; `model.eval()` loads no code.
    files["main.py"] = "if __name__ == '__main__':\n    model.eval()\n"
    files["dead.py"] = "import importlib\nimportlib.import_module(x)\n"
    assert python_reach(files).unreached("plugins/a.py")


def test_relative_imports_climb_packages() -> None:
    reach = python_reach(
        {
            "app/__main__.py": "from .cli import main\nmain()\n",
            "app/cli.py": "from ..shared.util import helper\nfrom . import jobs\n",
            "app/jobs.py": "",
            "shared/util.py": REAL,
            "shared/other.py": REAL,
        }
    )
    assert reach.roots == ("app/__main__.py",)
    assert not reach.unreached("app/jobs.py")
    assert not reach.unreached("shared/util.py")
    assert reach.unreached("shared/other.py")


def test_src_layout_and_a_console_script_root() -> None:
    python = {
        "src/tool/__init__.py": "",
        "src/tool/cli.py": "from tool.core import run\n",
        "src/tool/core.py": REAL,
        "src/tool/unused.py": REAL,
    }
    config = {"pyproject.toml": '[project.scripts]\ntool = "tool.cli:main"\n'}
    reach = python_reach(python, config)
    assert reach.roots == ("src/tool/__init__.py", "src/tool/cli.py")
    assert not reach.unreached("src/tool/core.py")
    assert reach.unreached("src/tool/unused.py")
    assert python_reach(python).off is not None  # without the declaration: a library


def test_django_and_unparsable_roots_turn_the_rule_off() -> None:
    django = {"manage.py": "if __name__ == '__main__':\n    import django\n", "m.py": REAL}
    assert "Django" in (python_reach(django).off or "")
    broken = {"main.py": "from fastapi import FastAPI\napp = FastAPI(\n", "m.py": REAL}
    assert "does not parse" in (python_reach(broken).off or "")
    # A broken file nothing imports is only unreached; one the app imports turns the rule off.
    dead = {"main.py": "if __name__ == '__main__':\n    pass\n", "old.py": "def (:\n"}
    assert python_reach(dead).unreached("old.py")
    dead["main.py"] = "import old\nif __name__ == '__main__':\n    pass\n"
    assert "old.py is imported but does not parse" in (python_reach(dead).off or "")


def test_names_and_entry_configs() -> None:
    assert module_name("src/a/__init__.py") == "src.a"
    assert module_name("a/b.py") == "a.b"
    assert is_entry_config("deploy/Dockerfile.api") and is_entry_config("pyproject.toml")
    assert not is_entry_config("README.md") and not is_entry_config("uv.lock")


def test_a_graph_too_large_to_follow_turns_the_rule_off(monkeypatch) -> None:
    files = {"main.py": "import a\nif __name__ == '__main__':\n    pass\n", "a.py": "", "b.py": ""}
    assert reachability.python_reach(files).unreached("b.py")
    monkeypatch.setattr(reachability, "_MAX_WORK", 1)
    assert "too large to follow" in (reachability.python_reach(files).off or "")


# -- JavaScript / TypeScript ------------------------------------------------------------------

PAGE = '<html><body><script type="module" src="/src/main.jsx"></script></body></html>\n'


def vite_app(app_imports: tuple[str, ...]) -> dict[str, ScriptFile]:
    return {
        "web/src/main.jsx": ScriptFile(static=("react", "./App.jsx"), strict=True),
        "web/src/App.jsx": ScriptFile(static=app_imports, strict=True),
        "web/src/views/Detail.jsx": ScriptFile(strict=True),
        "web/src/views/Lazy.jsx": ScriptFile(strict=True),
        "web/old/Detail.jsx": ScriptFile(strict=True),
    }


def test_a_page_reaches_its_scripts_through_static_and_literal_dynamic_imports() -> None:
    scripts = vite_app(("./views/Detail",))
    scripts["web/src/App.jsx"] = ScriptFile(
        static=("./views/Detail",), loads=("./views/Lazy.jsx",), strict=True
    )
    reach = script_reach(scripts, {"web/index.html": PAGE}, {}, [*scripts, "web/index.html"])
    assert reach.off is None
    assert not reach.unreached("web/src/views/Detail.jsx")
    assert not reach.unreached("web/src/views/Lazy.jsx")
    assert reach.why("web/old/Detail.jsx") == UNREACHED


def test_a_missing_static_import_in_javascript_stops_the_entry_loading() -> None:
    scripts = vite_app(("./views/Detail", "./views/Dashboard"))
    present = [*scripts, "web/index.html"]
    reach = script_reach(scripts, {"web/index.html": PAGE}, {}, present)
    why = reach.why("web/src/views/Detail.jsx") or ""
    assert why.startswith(UNLOADED)
    assert "web/src/App.jsx imports './views/Dashboard'" in why
    # A file the snapshot skipped (binary, too large) is held; TypeScript may drop an import
    # used only as a type; a path outside the run's folder is unknown: none of them fails.
    assert script_reach(
        scripts, {"web/index.html": PAGE}, {}, [*present, "web/src/views/Dashboard.jsx"]
    ).reached >= {"web/src/views/Detail.jsx"}
    scripts["web/src/App.jsx"] = ScriptFile(static=("./views/Detail", "./views/Dashboard"))
    assert not script_reach(scripts, {"web/index.html": PAGE}, {}, present).unreached(
        "web/src/views/Detail.jsx"
    )
    scripts["web/src/App.jsx"] = ScriptFile(static=("./views/Detail", "../../x"), strict=True)
    reach = script_reach(scripts, {"web/index.html": PAGE}, {}, present, root="web")
    assert not reach.unreached("web/src/views/Detail.jsx")


def test_package_json_next_routes_and_aliases_are_entries() -> None:
    scripts = {
        "api/src/server.ts": ScriptFile(static=("@/lib/db",)),
        "api/src/lib/db.ts": ScriptFile(),
        "api/src/unused.ts": ScriptFile(),
    }
    config = {"api/package.json": '{"main": "dist/server.js"}'}
    reach = script_reach(scripts, {}, config, scripts)
    assert not reach.unreached("api/src/server.ts")  # `dist/server.js` is built from it
    assert not reach.unreached("api/src/lib/db.ts")  # the `@/` alias resolves by suffix
    assert reach.unreached("api/src/unused.ts")
    web = {"web/app/page.tsx": ScriptFile(), "web/lib/dead.ts": ScriptFile()}
    next_app = {"web/package.json": '{"dependencies": {"next": "15"}}'}
    reach = script_reach(web, {}, next_app, web)
    assert not reach.unreached("web/app/page.tsx") and reach.unreached("web/lib/dead.ts")


def test_the_script_rule_is_off_without_knowing() -> None:
    lib = {"lib/a.js": ScriptFile(), "lib/b.js": ScriptFile()}
    assert "no JavaScript/TypeScript entry point" in (script_reach(lib, {}, {}, lib).off or "")
    dynamic = {"src/index.js": ScriptFile(dynamic="import() loads code named at run time")}
    assert script_reach({**lib, **dynamic}, {}, {}, lib).off
    nuxt = {"package.json": '{"dependencies": {"nuxt": "3"}}'}
    assert "nuxt loads modules by convention" in (script_reach(lib, {}, nuxt, lib).off or "")
