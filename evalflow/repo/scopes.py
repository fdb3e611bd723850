"""Which files are code, and where a probe's match lies in the syntax of that code.

Owns the file classes an `impl` probe may search and the syntactic facts the heuristic judge
needs to pin a match to behaviour (tree-sitter, Python and JavaScript/TypeScript):

- **File classes.** A *code* file has an extension of `CODE_EXTENSIONS` (programming
  languages; `GRAMMAR_BY_EXTENSION` lists those with a grammar, where scopes can be checked)
  and is not generated output (`is_generated`: a path part of `GENERATED_DIRS`, a name
  suffix of `GENERATED_SUFFIXES`, or an `@generated` / `DO NOT EDIT` marker in its first
  five lines). A *docs* file has an extension of `DOC_EXTENSIONS`. Lockfiles, data and
  config files are neither. `CONFIG_EXTENSIONS` files are read only to find references
  (entry points in `pyproject.toml`, handlers named in YAML).
- **Scopes** (`within:` of a probe; every key given must hold; each value is an RE2 pattern
  that must match the *whole* name):
  - `function`: the match lies in the body of a function/method whose name matches.
  - `call`: the match lies in the arguments of a call whose callee name matches (the last
    name of `a.b.emit(...)` is `emit`; `new X(...)` counts as a call of `X`; a decorator
    `@app.route(...)` is a call of `route`).
  - `payload_of`: the match lies in a dict/object literal that is delivered to a call whose
    callee matches — directly as an argument (through nested literals or calls), or through a
    variable the literal is assigned to and that a later matching call in the same function
    (or module) receives. The pseudo-callee `return` matches a literal that is returned,
    directly or through its variable. This is SPEC's payload-field rule: the field must be on
    the constructed object that is emitted/returned/persisted, not merely near the call site.
  - `handler_of`: the match lies in the body of a function registered by a call whose callee
    matches: decorated by it (`@app.route("POST", "/x")`), passed to it as a callback
    (`router.post("/x", (req, res) => ...)`), or named in its arguments anywhere in the
    repository (`app.add_route("POST", "/x", handle_x)`). This is SPEC's wiring rule: route
    registration → the handler that verifies and dispatches.
- **Disqualifiers** (`RepoScopes.disqualifier`): why a match in code is not behaviour —
  dead code, a stub, a call of a stub or of an undefined name, a message in an error path, an
  outcome value that is only declared. The rules are in `disqualifier`'s docstring.
"""

from __future__ import annotations

import builtins
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from tree_sitter import Node

from evalflow.domain.patterns import Pattern, compile_untrusted
from evalflow.domain.reachability import ScriptFile, embedded_script_file, runs_directly
from evalflow.repo.tests_common import Grammar, parser_for, text_of

GRAMMAR_BY_EXTENSION: Mapping[str, Grammar] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
}
# Programming languages without a grammar here: their files are code (an impl probe may match
# them) but no `within` scope and no disqualifier can be checked in them.
CODE_EXTENSIONS: frozenset[str] = frozenset(GRAMMAR_BY_EXTENSION) | frozenset(
    [
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".groovy",
        ".rb",
        ".php",
        ".cs",
        ".fs",
        ".swift",
        ".m",
        ".mm",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".ex",
        ".exs",
        ".erl",
        ".clj",
        ".cljs",
        ".dart",
        ".lua",
        ".pl",
        ".pm",
        ".r",
        ".jl",
        ".sh",
        ".bash",
        ".zsh",
        ".ps1",
        ".sql",
        ".vue",
        ".svelte",
        ".elm",
        ".hs",
        ".ml",
        ".zig",
        ".nim",
        ".sol",
    ]
)
DOC_EXTENSIONS: frozenset[str] = frozenset([".md", ".markdown", ".mdx", ".rst", ".adoc", ".txt"])
CONFIG_EXTENSIONS: frozenset[str] = frozenset([".toml", ".cfg", ".ini", ".json", ".yaml", ".yml"])
GENERATED_DIRS: frozenset[str] = frozenset(
    [
        "node_modules",
        "dist",
        "build",
        "out",
        "target",
        "vendor",
        "coverage",
        "__generated__",
        "generated",
        ".next",
        ".nuxt",
        "__pycache__",
        "site-packages",
    ]
)
GENERATED_SUFFIXES: tuple[str, ...] = (
    ".min.js",
    ".bundle.js",
    ".d.ts",
    "_pb2.py",
    "_pb2_grpc.py",
    ".pb.go",
    ".generated.ts",
    ".generated.js",
)
_GENERATED_MARKER = re.compile(r"@generated|DO NOT EDIT")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_COMMENT_LINE = re.compile(r"\s*(?:#|//|/\*|\*)")

_FUNCTIONS = frozenset(
    {
        "function_definition",
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
    }
)
_CALLS = frozenset({"call", "call_expression", "new_expression"})
_LITERALS = frozenset({"dictionary", "object"})
# Nodes a constructed literal may pass through on its way to the call that receives it.
_CARRIERS = frozenset(
    {
        "pair",
        "dictionary",
        "object",
        "list",
        "tuple",
        "array",
        "parenthesized_expression",
        "keyword_argument",
        "argument_list",
        "arguments",
        "spread_element",
        "dictionary_splat",
        "list_splat",
        "call",
        "call_expression",
        "new_expression",
        "await",
        "await_expression",
        "as_expression",
        "satisfies_expression",
        "type_assertion",
    }
)
_STRINGS = frozenset({"string", "template_string", "concatenated_string"})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical"})
_LOG_OBJECTS = re.compile(r"(?i)^(?:log|logger|logging|_log|_logger|console|\w*_logger)$")
_ENUM_BASES = re.compile(r"\b(?:Enum|StrEnum|IntEnum|Flag|IntFlag)\b")
_CONSTANT_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_NOT_IMPLEMENTED = re.compile(r"(?i)not\s*implemented|unimplemented|\btodo\b")
_JS_GLOBALS = frozenset(
    [
        "require",
        "setTimeout",
        "setInterval",
        "clearTimeout",
        "clearInterval",
        "setImmediate",
        "queueMicrotask",
        "fetch",
        "parseInt",
        "parseFloat",
        "isNaN",
        "isFinite",
        "encodeURIComponent",
        "decodeURIComponent",
        "encodeURI",
        "decodeURI",
        "structuredClone",
        "atob",
        "btoa",
        "Number",
        "String",
        "Boolean",
        "Array",
        "Object",
        "Date",
        "Error",
        "TypeError",
        "RangeError",
        "Promise",
        "Symbol",
        "BigInt",
        "Map",
        "Set",
        "WeakMap",
        "WeakSet",
        "RegExp",
        "URL",
        "URLSearchParams",
        "JSON",
        "Math",
        "Reflect",
        "Proxy",
        "describe",
        "it",
        "test",
        "expect",
        "beforeEach",
        "afterEach",
        "beforeAll",
        "afterAll",
        "import",
        "super",
        "alert",
    ]
)
_PY_BUILTINS = frozenset(dir(builtins))


def extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def grammar_of(path: str) -> Grammar | None:
    """The tree-sitter grammar of a file, by extension (None: no grammar here)."""
    return GRAMMAR_BY_EXTENSION.get(extension(path))


def is_generated(path: str, text: str) -> bool:
    """Build output, vendored or generated code (see the module docstring)."""
    parts = path.split("/")
    if any(part in GENERATED_DIRS for part in parts[:-1]):
        return True
    if parts[-1].lower().endswith(GENERATED_SUFFIXES):
        return True
    head = "\n".join(text.split("\n", 5)[:5])
    return bool(_GENERATED_MARKER.search(head))


def is_code_file(path: str, text: str) -> bool:
    """Source code of a programming language that is not generated output."""
    return extension(path) in CODE_EXTENSIONS and not is_generated(path, text)


def is_doc_file(path: str) -> bool:
    return extension(path) in DOC_EXTENSIONS


def _whole(pattern: str) -> Pattern:
    return compile_untrusted(f"^(?:{pattern})$")


def _name_matches(pattern: str, name: str | None) -> bool:
    return name is not None and _whole(pattern).search(name) is not None


def callee_name(call: Node) -> str | None:
    """The last name of a call's callee: `emit` for `self.bus.emit(...)`, `X` for `new X()`."""
    target = call.child_by_field_name("function") or call.child_by_field_name("constructor")
    return _last_name(target)


def _last_name(node: Node | None) -> str | None:
    while node is not None:
        if node.type in {"identifier", "property_identifier", "type_identifier"}:
            return text_of(node)
        if node.type == "attribute":
            node = node.child_by_field_name("attribute")
        elif node.type == "member_expression":
            node = node.child_by_field_name("property")
        elif node.type in {"call", "call_expression"}:
            node = node.child_by_field_name("function")
        elif node.type in {"parenthesized_expression", "non_null_expression"} and node.children:
            node = node.named_children[0] if node.named_children else None
        else:
            return None
    return None


def _contains(outer: Node, inner: Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _ancestors(node: Node) -> Iterable[Node]:
    current: Node | None = node
    while current is not None:
        yield current
        current = current.parent


def function_name(node: Node) -> str | None:
    """The name a function is known by: its own, or the variable/key/property it is bound to."""
    own = node.child_by_field_name("name")
    if own is not None:
        return text_of(own)
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator":
        return text_of(parent.child_by_field_name("name"))
    if parent.type == "pair":
        return text_of(parent.child_by_field_name("key")).strip("'\"")
    if parent.type in {"assignment_expression", "assignment"}:
        return _last_name(parent.child_by_field_name("left"))
    if parent.type in {"public_field_definition", "field_definition"}:
        return text_of(parent.child_by_field_name("name") or parent.child_by_field_name("property"))
    return None


def _decorators(function: Node) -> list[Node]:
    """The decorator expressions of a function (Python `decorated_definition`, TS methods)."""
    parent = function.parent
    holder = parent if parent is not None and parent.type == "decorated_definition" else function
    found = [c for c in holder.children if c.type == "decorator"]
    return [c.named_children[0] for c in found if c.named_children]


def _body_statements(function: Node) -> list[Node]:
    body = function.child_by_field_name("body")
    if body is None:
        return []
    if body.type not in {"block", "statement_block"}:
        return [body]  # an expression-bodied arrow function returns that expression
    statements = [c for c in body.named_children if c.type != "comment"]
    first = statements[0] if statements else None
    if (
        first is not None
        and first.type == "expression_statement"
        and first.named_children
        and first.named_children[0].type == "string"
    ):
        statements = statements[1:]  # a docstring documents, it does not perform
    return statements


def is_stub(function: Node) -> bool:
    """A body that performs nothing: empty, `pass`, `...`, a bare `return`/`return None`, or
    only a raise/throw of "not implemented"."""
    statements = _body_statements(function)
    if function.child_by_field_name("body") is None:
        return False  # an abstract/overload signature; not a body
    if not statements:
        return True
    if len(statements) > 1:
        return False
    only = statements[0]
    text = text_of(only).strip().rstrip(";")
    if only.type == "pass_statement" or text in {"...", "return", "return None"}:
        return True
    if text in {"return null", "return undefined"}:
        return True
    if only.type in {"raise_statement", "throw_statement"}:
        return "NotImplementedError" in text or bool(_NOT_IMPLEMENTED.search(text))
    return False


def is_inert_class(cls: Node) -> bool:
    """A class that performs nothing: no base class and no decorator (either may supply
    behaviour), and its body holds only docstrings, constant attributes and methods whose
    every statement is inert (`_inert`): a worker whose `start()` only sets
    `self.running = True` and logs is a name, not a worker."""
    bases = cls.child_by_field_name("superclasses")
    if (bases is not None and text_of(bases).replace(" ", "") not in {"()", "(object)"}) or any(
        c.type in {"class_heritage", "decorator"} for c in cls.children
    ):
        return False
    if cls.parent is not None and cls.parent.type == "decorated_definition":
        return False
    body = cls.child_by_field_name("body")
    if body is None:
        return False
    for child in body.named_children:
        member = child
        if child.type == "decorated_definition":
            if any(text_of(d) not in _PLAIN_METHOD_DECORATORS for d in _decorators_of(child)):
                return False
            member = child.child_by_field_name("definition") or child
        if member.type in {"comment", "pass_statement"}:
            continue
        if member.type in {"function_definition", "method_definition"}:
            if not all(_inert(st) for st in _body_statements(member)):
                return False
        elif member.type in {"field_definition", "public_field_definition"}:
            value = member.child_by_field_name("value")
            if value is not None and not _constant(value):
                return False
        elif not _inert(member):
            return False
    return True


# Method decorators that change how a method is called, never what it does.
_PLAIN_METHOD_DECORATORS = frozenset({"@property", "@staticmethod", "@classmethod"})
_CLASSES = frozenset({"class_definition", "class_declaration", "class"})
_CONSTANTS = frozenset(
    {
        "true",
        "false",
        "none",
        "null",
        "undefined",
        "integer",
        "float",
        "number",
        "string",
        "ellipsis",
    }
)


def _decorators_of(decorated: Node) -> list[Node]:
    return [c for c in decorated.children if c.type == "decorator"]


def _constant(node: Node) -> bool:
    """A literal (number, string, boolean, None/null/undefined) or an empty collection."""
    if node.type in _CONSTANTS:
        return node.type != "string" or not any(
            c.type in {"interpolation", "template_substitution"} for c in node.children
        )
    return node.type in {"list", "dictionary", "tuple", "array", "object"} and (
        not node.named_children
    )


def _own_attribute(node: Node) -> bool:
    """`self.x` / `this.x`: state of the instance itself."""
    if node.type not in {"attribute", "member_expression"}:
        return False
    owner = node.child_by_field_name("object")
    return owner is not None and text_of(owner) in {"self", "this", "cls"}


def _inert(statement: Node) -> bool:
    """A statement that performs nothing beyond the instance's own flags: a docstring,
    `pass`/`...`, a log or print call, a return of a constant or an own attribute, an own
    attribute set to a constant or to a logger, a raise of "not implemented"."""
    text = text_of(statement).strip().rstrip(";")
    if statement.type in {"pass_statement", "comment", "empty_statement"}:
        return True
    if statement.type in {"raise_statement", "throw_statement"}:
        return "NotImplementedError" in text or bool(_NOT_IMPLEMENTED.search(text))
    if statement.type == "return_statement":
        value = statement.named_children[0] if statement.named_children else None
        return value is None or _constant(value) or _own_attribute(value)
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return False
    expr = statement.named_children[0]
    if expr.type in {"string", "ellipsis"}:
        return True
    if expr.type in {"assignment", "assignment_expression"}:
        left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
        if left is None or right is None or not _own_attribute(left):
            return False
        return _constant(right) or (
            right.type in _CALLS and callee_name(right) in {"getLogger", "get_logger"}
        )
    if expr.type in {"await", "await_expression"} and expr.named_children:
        expr = expr.named_children[0]
    if expr.type in _CALLS:
        target = expr.child_by_field_name("function")
        owner = target.child_by_field_name("object") if target is not None else None
        method = callee_name(expr)
        if target is not None and target.type == "identifier":
            return method == "print"
        return (method in _LOG_METHODS or method == "log") and bool(
            _LOG_OBJECTS.match(_last_name(owner) or "")
        )
    return False


@dataclass(frozen=True)
class Scope:
    """A compiled `within:` of a probe (the vocabulary is in the module docstring)."""

    function: str | None = None
    call: str | None = None
    payload_of: str | None = None
    handler_of: str | None = None

    def describe(self) -> str:
        parts = [f"{k}: {v!r}" for k, v in vars(self).items() if v is not None]
        return "within {" + ", ".join(parts) + "}"


@dataclass(frozen=True)
class Definition:
    path: str
    line: int
    name: str
    stub: bool


class ParsedFile:
    """One code file with a grammar, parsed once; byte offsets of every line."""

    def __init__(self, path: str, text: str, grammar: Grammar) -> None:
        self.path = path
        self.grammar = grammar
        self.lines = text.split("\n")
        self.tree = parser_for(grammar).parse(text.encode("utf-8"))
        starts = [0]
        for line in self.lines:
            starts.append(starts[-1] + len(line.encode("utf-8")) + 1)
        self._starts = starts

    def node_at(self, line: int, start: int, end: int) -> Node:
        """The smallest node spanning characters [start, end) of 1-based `line`."""
        text = self.lines[line - 1]
        base = self._starts[line - 1]
        lo = base + len(text[:start].encode("utf-8"))
        hi = base + len(text[:end].encode("utf-8"))
        node = self.tree.root_node.descendant_for_byte_range(lo, max(lo, hi - 1))
        return node or self.tree.root_node

    def _nodes(self, types: frozenset[str] | set[str]) -> list[Node]:
        found: list[Node] = []
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type in types:
                found.append(node)
            stack.extend(node.children)
        return found

    @cached_property
    def functions(self) -> list[Node]:
        return self._nodes(_FUNCTIONS)

    @cached_property
    def calls(self) -> list[Node]:
        return self._nodes(_CALLS)

    @cached_property
    def bound_names(self) -> frozenset[str]:
        """Every identifier of the file that is not the callee of a call: names imported,
        assigned, declared, passed or read (a name that is only ever called is unbound)."""
        names: set[str] = set()
        callees = {
            (n.start_byte, n.end_byte)
            for c in self.calls
            if (n := c.child_by_field_name("function")) is not None and n.type == "identifier"
        }
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "identifier" and (node.start_byte, node.end_byte) not in callees:
                names.add(text_of(node))
            stack.extend(node.children)
        return frozenset(names)


# A script file named inside a string (`'./worker.js'`, `'<rootDir>/jest.setup.js'`).
_SCRIPT_PATH = re.compile(r"[\w./@-]*\w\.(?:[cm]?[jt]sx?)\b")


def script_file(parsed: ParsedFile) -> ScriptFile:
    """The module references of a parsed JS/TS file (`evalflow.domain.reachability`): static
    imports and re-exports, `require`/`import()` of a literal, strings naming a script file,
    and the first load of a computed name or a module glob (`import.meta.glob`,
    `require.context`). A file with syntax errors gives every specifier-like text as a plain
    reference (its imports are then not known exactly)."""
    if parsed.grammar == "python":
        raise ValueError(f"{parsed.path} is no script")
    text = "\n".join(parsed.lines)
    direct = runs_directly(text)
    if parsed.tree.root_node.has_error:
        loose = embedded_script_file(text)
        return ScriptFile(loads=loose.loads, runs_directly=direct)
    static: list[str] = []
    loads: list[str] = []
    dynamic: str | None = None
    stack = [parsed.tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.children))  # document order: the first missing is named
        if node.type in {"import_statement", "export_statement"}:
            source = node.child_by_field_name("source")
            if source is None:
                continue
            spec = _literal(source)
            type_only = any(c.type == "type" for c in node.children)
            if node.type == "import_statement" and any(
                c.type == "import_require_clause" for c in node.children
            ):
                loads.append(spec or "")
            else:
                (loads if type_only else static).append(spec or "")
        elif node.type in {"call_expression"}:
            callee = node.child_by_field_name("function")
            name = text_of(callee) if callee is not None else ""
            if name in {"import.meta.glob", "require.context", "import.meta.globEager"}:
                dynamic = dynamic or f"{name}() loads modules by pattern ({parsed.path})"
            elif name in {"import", "require"}:
                args = node.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                spec = _literal(first) if first is not None else None
                if spec is not None:
                    loads.append(spec)
                elif dynamic is None:
                    line = node.start_point[0] + 1
                    dynamic = f"{name}() loads code named at run time ({parsed.path}:{line})"
        elif node.type == "string":
            loads += _SCRIPT_PATH.findall((_literal(node) or "")[:300])
    return ScriptFile(
        static=tuple(s for s in static if s),
        loads=tuple(s for s in loads if s),
        dynamic=dynamic,
        strict=parsed.grammar == "javascript",
        runs_directly=direct,
    )


def _literal(node: Node) -> str | None:
    """The value of a string literal, or of a template literal without substitutions."""
    if node.type == "string" or (
        node.type == "template_string"
        and not any(c.type == "template_substitution" for c in node.children)
    ):
        return text_of(node)[1:-1]
    return None


class RepoScopes:
    """Scope and disqualifier queries over the code files of one repository snapshot.

    `files` maps path → text of every file that may hold code or references (the caller
    passes the snapshot); only code files with a grammar are parsed, lazily, once each.
    """

    def __init__(self, files: Mapping[str, str]) -> None:
        self._texts = dict(files)
        self._parsed: dict[str, ParsedFile | None] = {}
        self._definitions: dict[str, list[Definition]] = {}
        self._registrations: dict[tuple[str, str], bool] = {}

    def parsed(self, path: str) -> ParsedFile | None:
        if path not in self._parsed:
            grammar = grammar_of(path)
            text = self._texts.get(path)
            ok = grammar is not None and text is not None and is_code_file(path, text)
            self._parsed[path] = ParsedFile(path, text, grammar) if ok else None  # type: ignore[arg-type]
        return self._parsed[path]

    @cached_property
    def _code_paths(self) -> list[str]:
        return sorted(p for p, t in self._texts.items() if is_code_file(p, t))

    def definitions_of(self, name: str) -> list[Definition]:
        """The functions and classes named `name` in the repository's code files. A name is
        spelled in the file that defines it, so only files whose text holds it are parsed:
        parsing every file cost +1.1 GB on a 784k-line repository (issue 33)."""
        if name not in self._definitions:
            self._definitions[name] = [
                d
                for path in self._code_paths
                if name in self._texts[path]
                for d in self._file_definitions(path)
                if d.name == name
            ]
        return self._definitions[name]

    def _file_definitions(self, path: str) -> list[Definition]:
        """Named functions, then classes, of one parsable code file (cached by `parsed`)."""
        parsed = self.parsed(path)
        if parsed is None:
            return []
        out: list[Definition] = []
        for fn in parsed.functions:
            name = function_name(fn)
            if name:
                out.append(Definition(path, fn.start_point[0] + 1, name, is_stub(fn)))
        stack = [parsed.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type in {"class_definition", "class_declaration", "class"}:
                name = text_of(node.child_by_field_name("name"))
                if name:
                    out.append(Definition(path, node.start_point[0] + 1, name, False))
            stack.extend(node.children)
        return out

    @cached_property
    def _word_counts(self) -> Counter[str]:
        """Occurrences of every word in code and config files, whole-line comments left out."""
        counts: Counter[str] = Counter()
        for path, text in self._texts.items():
            ext = extension(path)
            if not (is_code_file(path, text) or ext in CONFIG_EXTENSIONS):
                continue
            for line in text.split("\n"):
                if not _COMMENT_LINE.match(line):
                    counts.update(_WORD.findall(line))
        return counts

    def _is_registered(self, pattern: str, name: str) -> bool:
        """Whether `name` is passed as an argument to a call whose callee matches `pattern`,
        anywhere in the repository: only files whose text spells the name can pass it."""
        key = (pattern, name)
        if key not in self._registrations:
            self._registrations[key] = name in self._registered(pattern, name)
        return self._registrations[key]

    def _registered(self, pattern: str, spelled: str) -> frozenset[str]:
        """Names passed as arguments to calls whose callee matches `pattern`, in the files
        whose text holds `spelled`."""
        names: set[str] = set()
        for path in self._code_paths:
            if spelled not in self._texts[path]:
                continue
            parsed = self.parsed(path)
            if parsed is None:
                continue
            for call in parsed.calls:
                args = call.child_by_field_name("arguments")
                if args is None or not _name_matches(pattern, callee_name(call)):
                    continue
                for arg in args.named_children:
                    value = (
                        arg.child_by_field_name("value")
                        if arg.type
                        in {
                            "keyword_argument",
                            "pair",
                        }
                        else arg
                    )
                    if value is not None and value.type in {
                        "identifier",
                        "attribute",
                        "member_expression",
                    }:
                        name = _last_name(value)
                        if name:
                            names.add(name)
        return frozenset(names)

    # -- scopes ---------------------------------------------------------------------------

    def in_scope(self, path: str, line: int, start: int, end: int, scope: Scope) -> bool:
        """Whether the match [start, end) on `line` of `path` satisfies every key of `scope`
        (False when the file has no grammar: a scope that cannot be checked never holds)."""
        parsed = self.parsed(path)
        if parsed is None:
            return False
        node = parsed.node_at(line, start, end)
        checks = (
            (scope.function, self._in_function),
            (scope.call, self._in_call),
            (scope.payload_of, self._in_payload),
            (scope.handler_of, self._in_handler),
        )
        return all(fn(node, pattern) for pattern, fn in checks if pattern is not None)

    def _in_function(self, node: Node, pattern: str) -> bool:
        return any(
            a.type in _FUNCTIONS and _name_matches(pattern, function_name(a))
            for a in _ancestors(node)
        )

    def _in_call(self, node: Node, pattern: str) -> bool:
        for a in _ancestors(node):
            if a.type in _CALLS:
                args = a.child_by_field_name("arguments")
                inside = args is not None and _contains(args, node)
                if inside and _name_matches(pattern, callee_name(a)):
                    return True
        return False

    def _in_payload(self, node: Node, pattern: str) -> bool:
        return any(a.type in _LITERALS and self._delivered(a, pattern) for a in _ancestors(node))

    def _delivered(self, literal: Node, pattern: str) -> bool:
        """Whether `literal` reaches a matching call (or a `return`) — see `payload_of`."""
        child = literal
        parent = literal.parent
        while parent is not None and parent.type in _CARRIERS:
            if parent.type in _CALLS:
                args = parent.child_by_field_name("arguments")
                if args is not None and _contains(args, child):
                    if _name_matches(pattern, callee_name(parent)):
                        return True
                else:
                    return False  # the literal is the callee itself: not a payload
            child, parent = parent, parent.parent
        if parent is None:
            return False
        if parent.type == "return_statement":
            return _name_matches(pattern, "return")
        variable = self._assigned_name(child, parent)
        if variable is None:
            return False
        return self._variable_delivered(variable, parent, pattern)

    @staticmethod
    def _assigned_name(value: Node, parent: Node) -> str | None:
        if parent.type == "variable_declarator" and parent.child_by_field_name("value") == value:
            return _last_name(parent.child_by_field_name("name"))
        assigns = parent.type in {"assignment", "assignment_expression"}
        if assigns and parent.child_by_field_name("right") == value:
            return _last_name(parent.child_by_field_name("left"))
        return None

    def _variable_delivered(self, variable: str, assignment: Node, pattern: str) -> bool:
        region = next((a for a in _ancestors(assignment) if a.type in _FUNCTIONS), None) or _root(
            assignment
        )
        stack = [region]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if node.start_byte < assignment.end_byte:
                continue
            if node.type in _CALLS and _name_matches(pattern, callee_name(node)):
                args = node.child_by_field_name("arguments")
                if args is not None and _mentions(args, variable):
                    return True
            returned = node.type == "return_statement" and _name_matches(pattern, "return")
            if returned and _mentions(node, variable):
                return True
        return False

    def _in_handler(self, node: Node, pattern: str) -> bool:
        for a in _ancestors(node):
            if a.type not in _FUNCTIONS:
                continue
            for decorator in _decorators(a):
                if _name_matches(pattern, _last_name(decorator)):
                    return True
            parent = a.parent
            if parent is not None and parent.type == "arguments":
                call = parent.parent
                if call is not None and _name_matches(pattern, callee_name(call)):
                    return True
            name = function_name(a)
            if name and self._is_registered(pattern, name):
                return True
        return False

    # -- disqualifiers --------------------------------------------------------------------

    def disqualifier(self, path: str, line: int, start: int, end: int) -> str | None:
        """Why the match [start, end) on `line` of `path` is not behaviour, or None.

        Rules (each decided from the syntax tree; a file without grammar is never
        disqualified — its matches are taken as they are):
        1. *dead code*: the match lies in a named function that nothing references — its
           name occurs nowhere else in the repository's code or config files (tests
           included), it has no decorator, it is no default export and no dunder method,
           and it is not a callback handed to a call. A function only reached through a
           dead function is dead too (every enclosing function is checked).
        2. *stub*: the match lies in a function whose body performs nothing (`is_stub`), or
           in a class that performs nothing (`is_inert_class`: no base, no decorator, its
           methods only log and set or return constants).
        3. *call without behaviour*: the match covers the callee of a call whose every
           definition in the repository is a stub, or whose bare name is defined nowhere in
           the repository, imported nowhere in the file and is no builtin.
        4. *message in an error path*: the match lies inside a string literal that belongs
           to a `raise`/`throw` statement or is an argument of a logging call
           (`log.error(...)`, `console.warn(...)`): the text describes a failure or a log
           line, it does not perform the behaviour.
        5. *declared outcome value*: the match lies inside a string literal that is the
           whole value of an enum member or of a module-level UPPER_CASE constant
           (`ACTIVE = "active"`): the value is declared, not produced. A constant that
           *configures* behaviour (`TRIAL_DAYS = 14`: the match is not inside a string) and
           a collection of allowed values (`CHANNELS = ("email", "in_app")`) are not
           affected — the latter is what a decision point validates against.
        6. *prose*: the match lies inside a string that is a statement of its own (a
           docstring, a bare string between statements): nothing reads it at run time.
        """
        parsed = self.parsed(path)
        if parsed is None:
            return None
        node = parsed.node_at(line, start, end)
        reason = self._dead_or_stub(node) or self._call_without_behaviour(parsed, node)
        if reason:
            return reason
        string = next((a for a in _ancestors(node) if a.type in _STRINGS), None)
        if string is not None:
            return _prose(string) or _error_message(string) or _declared_value(string)
        return None

    def _dead_or_stub(self, node: Node) -> str | None:
        for fn in (a for a in _ancestors(node) if a.type in _FUNCTIONS):
            name = function_name(fn)
            where = f"`{name or 'an anonymous function'}` (line {fn.start_point[0] + 1})"
            if is_stub(fn):
                return f"stub: {where} has a body that performs nothing"
            if name and self._dead(fn, name):
                return f"dead code: {where} is never referenced"
        for cls in (a for a in _ancestors(node) if a.type in _CLASSES):
            if is_inert_class(cls):
                name = text_of(cls.child_by_field_name("name"))
                where = f"class `{name}` (line {cls.start_point[0] + 1})"
                return f"stub: {where} only logs and sets or returns constants"
        return None

    def _dead(self, fn: Node, name: str) -> bool:
        if fn.parent is not None and fn.parent.type in {"arguments", "argument_list"}:
            return False  # a callback handed to a call is reachable through it
        if name.startswith("__") and name.endswith("__"):
            return False
        if _decorators(fn):
            return False
        holder = fn.parent
        if (
            holder is not None
            and holder.type == "export_statement"
            and "default" in {c.type for c in holder.children}
        ):
            return False  # a default export is found by a framework, not by its name
        defined = len(self.definitions_of(name)) or 1
        return self._word_counts[name] <= defined

    def _call_without_behaviour(self, parsed: ParsedFile, node: Node) -> str | None:
        call = next((a for a in _ancestors(node) if a.type in _CALLS), None)
        if call is None:
            return None
        target = call.child_by_field_name("function") or call.child_by_field_name("constructor")
        if target is None or not (
            target.start_byte < node.end_byte and node.start_byte < target.end_byte
        ):
            return None  # the match is in the arguments, not on the call site
        name = callee_name(call)
        if not name:
            return None
        definitions = self.definitions_of(name)
        if definitions and all(d.stub for d in definitions):
            refs = ", ".join(f"{d.path}:{d.line}" for d in definitions)
            return f"call without behaviour: `{name}` is only defined as a stub ({refs})"
        if definitions or target.type not in {"identifier"}:
            return None
        builtin = _PY_BUILTINS if parsed.grammar == "python" else _JS_GLOBALS
        if name in builtin or name in parsed.bound_names:
            return None
        return f"call without behaviour: `{name}` is defined and imported nowhere"


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


def _mentions(node: Node, name: str) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in {"identifier", "shorthand_property_identifier"}:
            if text_of(current) == name:
                return True
        elif current.type in {"attribute", "member_expression"} and _last_name(current) == name:
            return True
        stack.extend(current.children)
    return False


def _prose(string: Node) -> str | None:
    # A statement that is only a string (a docstring, a bare string between statements) is
    # read by nobody at run time: it describes the behaviour, it does not perform it.
    outer = string
    while outer.parent is not None and outer.parent.type in _STRINGS:
        outer = outer.parent
    holder = outer.parent
    if (
        holder is not None
        and holder.type == "expression_statement"
        and holder.named_child_count == 1
    ):
        return "prose: the match is text of a docstring or a string-only statement"
    return None


def _error_message(string: Node) -> str | None:
    for a in _ancestors(string):
        if a.type in {"raise_statement", "throw_statement"}:
            return "message in an error path: the match is text of a raise/throw"
        if a.type in _CALLS:
            target = a.child_by_field_name("function")
            method = callee_name(a)
            owner = target.child_by_field_name("object") if target is not None else None
            if method in _LOG_METHODS and _LOG_OBJECTS.match(_last_name(owner) or ""):
                return "message in an error path: the match is text of a log call"
        if a.type in {"expression_statement", "block", "statement_block", "module", "program"}:
            return None
    return None


def _declared_value(string: Node) -> str | None:
    # Only a single declared value: a collection of allowed values (`CHANNELS = ("email",
    # "in_app")`) is what a decision point validates against, so it is left to the probe.
    parent = string.parent
    if parent is not None and parent.type == "enum_assignment":
        return _DECLARED
    if parent is None or parent.type not in {"assignment", "variable_declarator"}:
        return None
    left = parent.child_by_field_name("left") or parent.child_by_field_name("name")
    holder = parent.parent
    while holder is not None and holder.type in _DECLARATION_WRAPPERS:
        holder = holder.parent
    if holder is None:
        return None
    if holder.type == "block" and holder.parent is not None:
        cls = holder.parent
        bases = text_of(cls.child_by_field_name("superclasses"))
        if cls.type == "class_definition" and _ENUM_BASES.search(bases):
            return _DECLARED
        return None
    if holder.type in {"module", "program"} and _CONSTANT_NAME.match(_last_name(left) or ""):
        return _DECLARED
    return None


_DECLARATION_WRAPPERS = frozenset(
    {"expression_statement", "lexical_declaration", "variable_declaration", "export_statement"}
)
_DECLARED = "declared outcome value: the match is a constant/enum value, not code producing it"
