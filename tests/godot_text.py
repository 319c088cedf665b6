"""A small grammar check of Godot 4 text resources (the ``.tres`` form of
Godot's docs, "TSCN file format", and ``resource_format_text.cpp``), for what
godot-parser 0.1.7 cannot read: ``;`` comment lines and Godot 4's typed
arrays ``Array[T]([...])`` (test only; tests/test_godot_export.py).

It parses the whole file: the descriptor first, then ``[ext_resource]``,
``[sub_resource]`` and ``[resource]`` sections in that order, each followed
by ``key = value`` lines; values are ints, floats, strings, booleans,
``ExtResource("id")`` / ``SubResource("id")`` of ids declared above,
``Vector2i(a, b)``, dictionaries and arrays, typed or not. A typed array's
elements must be of its type (a ``SubResource`` in ``Array[ExtResource(s)]``
must have script ``s``). ``load_steps`` must count the resources plus one.
"""

from __future__ import annotations

import re

TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d+)?(?:e-?\d+)?)|(?P<word>[A-Za-z_]\w*)'
                   r'|(?P<punct>[\[\](){},:]))')


class GrammarError(ValueError):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = TOKEN.match(text, pos)
        if not m:
            raise GrammarError(f"unexpected text {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Values:
    def __init__(self, text: str, ext: dict, sub: dict):
        self.t, self.i, self.ext, self.sub = _tokens(text), 0, ext, sub

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            raise GrammarError(f"expected {value!r}, found {tok[1]!r}")
        self.i += 1
        return tok

    def ref(self, table: dict, what: str) -> str:
        self.take("(")
        kind, text = self.take()
        if kind != "str" or text[1:-1] not in table:
            raise GrammarError(f"{what}({text}) names no {what} declared above")
        self.take(")")
        return text[1:-1]

    def value(self):
        """``(type, payload)`` of the next value."""
        kind, text = self.take()
        if kind == "num":
            return ("float" if "." in text or "e" in text else "int"), text
        if kind == "str":
            return "String", text
        if kind == "word" and text in ("true", "false"):
            return "bool", text
        if text == "ExtResource":
            return "ExtResource", self.ref(self.ext, "ext_resource")
        if text == "SubResource":
            return "SubResource", self.ref(self.sub, "sub_resource")
        if text == "Vector2i":
            self.take("(")
            a = self.value()
            self.take(",")
            b = self.value()
            self.take(")")
            if a[0] != "int" or b[0] != "int":
                raise GrammarError("Vector2i takes two ints")
            return "Vector2i", (a[1], b[1])
        if text == "{":
            while self.peek()[1] != "}":
                if self.value()[0] != "String":
                    raise GrammarError("a dictionary key here is a string")
                self.take(":")
                self.value()
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("}")
            return "Dictionary", None
        if text == "[":
            return "Array", self.items("]")
        if text == "Array":
            self.take("[")
            if self.peek()[1] == "ExtResource":
                self.take()
                element = ("script", self.ref(self.ext, "ext_resource"))
            else:
                element = ("builtin", self.take()[1])
            self.take("]")
            self.take("(")
            self.take("[")
            items = self.items("]")
            self.take(")")
            for item in items:
                if element[0] == "builtin" and item[0] != element[1]:
                    raise GrammarError(f"a {item[0]} in an Array[{element[1]}]")
                if element[0] == "script":
                    if item[0] != "SubResource" or self.sub[item[1]] != element[1]:
                        raise GrammarError(f"{item} is not a resource of script {element[1]}")
            return "TypedArray", items
        raise GrammarError(f"no value starts with {text!r}")

    def items(self, close: str) -> list:
        out = []
        while self.peek()[1] != close:
            out.append(self.value())
            if self.peek()[1] == ",":
                self.take(",")
        self.take(close)
        return out


HEADING = re.compile(r'^\[(\w+)((?: \w+=(?:"[^"]*"|\d+))*)\]$')


def check(text: str) -> dict:
    """The parsed sections ``{"ext": {id: path}, "sub": {id: {key: value}}, "resource": {...}}``,
    or GrammarError naming the first line that breaks the grammar."""
    lines = text.split("\n")
    if lines[-1] != "" or any(line.endswith((" ", "\t")) for line in lines):
        raise GrammarError("the file ends with a newline and no line with trailing blanks")
    ext: dict[str, str] = {}
    sub: dict[str, str] = {}  # id -> its script's ext id
    parsed: dict = {"ext": {}, "sub": {}, "resource": None}
    order = {"gd_resource": 0, "ext_resource": 1, "sub_resource": 2, "resource": 3}
    stage, current, descriptor = -1, None, None
    for n, line in enumerate(lines[:-1], 1):
        try:
            if not line or line.startswith(";"):
                continue
            if line.startswith("["):
                m = HEADING.match(line)
                if not m or m.group(1) not in order:
                    raise GrammarError("not a heading of a text resource")
                attrs = dict(re.findall(r'(\w+)=("[^"]*"|\d+)', m.group(2)))
                kind = m.group(1)
                if order[kind] < stage or (kind == "gd_resource") != (n == 1) or (kind == "resource" and stage == 3):
                    raise GrammarError(f"[{kind}] out of order")
                stage = order[kind]
                if kind == "gd_resource":
                    descriptor = attrs
                    if attrs.get("format") != "3":
                        raise GrammarError("a Godot 4 resource is format=3")
                    continue
                if kind == "ext_resource":
                    ext[attrs["id"].strip('"')] = attrs["path"].strip('"')
                    parsed["ext"][attrs["id"].strip('"')] = attrs["path"].strip('"')
                    continue
                current = {}
                if kind == "sub_resource":
                    sid = attrs["id"].strip('"')
                    if sid in parsed["sub"]:
                        raise GrammarError(f"sub_resource {sid} declared twice")
                    parsed["sub"][sid] = current
                else:
                    parsed["resource"] = current
                continue
            key, eq, value = line.partition(" = ")
            if not eq or current is None or not re.fullmatch(r"\w+", key):
                raise GrammarError("not a `key = value` line of a section")
            v = _Values(value, ext, sub)
            current[key] = v.value()
            if v.peek()[0] is not None:
                raise GrammarError(f"text after the value: {v.peek()[1]!r}")
            if key == "script":
                if current[key][0] != "ExtResource":
                    raise GrammarError("script = ExtResource(...)")
                if current is not parsed["resource"]:
                    sub[next(k for k, s in parsed["sub"].items() if s is current)] = current[key][1]
        except GrammarError as exc:
            raise GrammarError(f"line {n}: {exc}: {line[:80]!r}") from None
    if descriptor is None or parsed["resource"] is None:
        raise GrammarError("a text resource has a descriptor and a [resource] section")
    if int(descriptor.get("load_steps", "1")) != len(parsed["ext"]) + len(parsed["sub"]) + 1:
        raise GrammarError(f"load_steps={descriptor.get('load_steps')} is not the resources plus one")
    return parsed
