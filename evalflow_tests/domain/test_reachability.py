from __future__ import annotations

from evalflow.domain import reachability
from evalflow.domain.reachability import is_entry_config, module_name, python_reach

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
