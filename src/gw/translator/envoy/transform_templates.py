"""Template trees (`ir.template`) → Lua functions of a render context `c`.

Each template becomes a function of `c`: literal text as is, `{{ expr }}` through `R.show`
(the established gateway's rendering: strings raw, null as nothing, the rest as JSON).
A template of text, values and `if`s is one Lua expression (no table built per render);
one with loops or `set` appends its parts to a table, statements as Lua control flow.
Loop and `set` variables are Lua locals; every other variable is looked up in the
template's data.
"""

from __future__ import annotations

from gw.translator import ir

_ARITH = frozenset({"+", "-", "*", "/", "%", "^"})
#: Operators whose Lua code already gives a boolean (no `R.truthy` around it).
_BOOLEAN = frozenset({"not", "and", "or", "==", "!=", "<", ">", "<=", ">=", "in"})
#: The most template nodes compiled as one expression (Lua's parser nests a level per
#: operand; longer templates use the table form).
_EXPRESSION_NODES = 40
#: Calls with a literal argument that skip the generic function table.
_DIRECT = {
    "header": "R.hdr(c, {0})",
    "request_header": "R.rqh(c, {0})",
    "extraction": '(c.extractions[{0}] or "")',
}


def compile_template(nodes: tuple[ir.Node, ...], escape: bool) -> str:
    if all(isinstance(n, ir.Text) for n in nodes):  # a constant: no function body to run
        text = "".join(n.text for n in nodes if isinstance(n, ir.Text))
        return f"function() return {lua_string(text)} end"
    compiler = _Compiler(escape)
    if _size(nodes) <= _EXPRESSION_NODES:
        expression = compiler.expression(nodes)
        if expression is not None:
            return f"function(c) return {expression} end"
    body = compiler.nodes(nodes, {})
    declared = "".join(f"local v_{name}\n" for name in sorted(compiler.assigned))
    return f"function(c)\nlocal o, n = {{}}, 0\n{declared}{body}return table.concat(o)\nend"


class _Compiler:
    def __init__(self, escape: bool) -> None:
        self.escape = escape
        self.assigned: set[str] = set()
        self.counter = 0

    def expression(self, nodes: tuple[ir.Node, ...]) -> str | None:
        """The nodes as one Lua string expression, or None when they hold a loop or `set`."""
        parts = []
        for node in nodes:
            if isinstance(node, ir.Text):
                parts.append(lua_string(node.text))
            elif isinstance(node, ir.Output):
                parts.append(self.show(node.output, {}))
            elif isinstance(node, ir.If):
                choice = self.choice(node)
                if choice is None:
                    return None
                parts.append(choice)
            else:
                return None
        return " .. ".join(parts) if parts else '""'

    def choice(self, node: ir.If) -> str | None:
        """`(c1 and (body1) or c2 and (body2) or (else))`: the bodies are strings, never
        false or nil, so the first branch whose condition holds gives the value."""
        out = []
        for branch in node.branches:
            body = self.expression(branch.body)
            if body is None:
                return None
            if branch.condition is None:
                out.append(f"({body})")
                break
            out.append(f"{self.truth(branch.condition, {})} and ({body})")
        else:
            out.append('""')
        return "(" + " or ".join(out) + ")"

    def truth(self, e: ir.Expr, scope: dict[str, str]) -> str:
        """`e` as a Lua boolean (the template's truthiness)."""
        code = self.expr(e, scope)
        return code if isinstance(e, ir.Op) and e.op in _BOOLEAN else f"R.truthy({code})"

    def nodes(self, nodes: tuple[ir.Node, ...], scope: dict[str, str]) -> str:
        return "".join(self.node(node, scope) for node in nodes)

    def node(self, node: ir.Node, scope: dict[str, str]) -> str:
        if isinstance(node, ir.Text):
            return f"n = n + 1; o[n] = {lua_string(node.text)}\n"
        if isinstance(node, ir.Output):
            return f"n = n + 1; o[n] = {self.show(node.output, scope)}\n"
        if isinstance(node, ir.If):
            out = []
            for index, branch in enumerate(node.branches):
                if branch.condition is None:
                    out.append("else\n")
                else:
                    keyword = "if" if index == 0 else "elseif"
                    out.append(f"{keyword} {self.truth(branch.condition, scope)} then\n")
                out.append(self.nodes(branch.body, scope))
            return "".join(out) + "end\n"
        if isinstance(node, ir.For):
            return self.loop(node, scope)
        self.assigned.add(node.assign)
        inner = {**scope, node.assign: f"v_{node.assign}"}
        scope.update(inner)
        return f"v_{node.assign} = {self.expr(node.value, scope)}\n"

    def show(self, e: ir.Expr, scope: dict[str, str]) -> str:
        return f"R.show({self.expr(e, scope)}, {'true' if self.escape else 'false'})"

    def loop(self, node: ir.For, scope: dict[str, str]) -> str:
        self.counter += 1
        k, items, obj = (f"{p}{self.counter}" for p in ("k", "items", "obj"))
        inner = {**scope, "loop": f"loop{self.counter}"}
        lines = [f"do local {items}, {obj} = R.each({self.expr(node.iterable, scope)})\n"]
        lines.append(
            f"for {k} = 1, #{items} do\nlocal loop{self.counter} = R.loop({k}, #{items})\n"
        )
        if len(node.loop) == 2:
            key, value = node.loop
            inner[key], inner[value] = f"v_{key}{self.counter}", f"v_{value}{self.counter}"
            lines.append(f"local v_{key}{self.counter} = {obj} and {items}[{k}] or ({k} - 1)\n")
            lines.append(
                f"local v_{value}{self.counter} = {obj} and {obj}[{items}[{k}]] or {items}[{k}]\n"
            )
        else:
            (value,) = node.loop
            inner[value] = f"v_{value}{self.counter}"
            lines.append(
                f"local v_{value}{self.counter} = {obj} and {obj}[{items}[{k}]] or {items}[{k}]\n"
            )
        lines.append(self.nodes(node.body, inner))
        return "".join(lines) + "end\nend\n"

    def expr(self, e: ir.Expr, scope: dict[str, str], missing: bool = False) -> str:
        if isinstance(e, ir.Literal):
            return _literal(e.literal)
        if isinstance(e, ir.Var):
            return self.var(e, scope, missing)
        if isinstance(e, ir.Call):
            if e.call == "default":
                first = self.expr(e.args[0], scope, missing=True)
                return f"R.default({first}, {self.expr(e.args[1], scope)})"
            literal = e.args[0] if len(e.args) == 1 and isinstance(e.args[0], ir.Literal) else None
            if literal is not None and isinstance(literal.literal, str) and e.call in _DIRECT:
                name = literal.literal.lower() if e.call != "extraction" else literal.literal
                return _DIRECT[e.call].format(lua_string(name))
            args = "".join(", " + self.expr(a, scope) for a in e.args)
            return f"R.call[{lua_string(e.call)}](c{args})"
        if e.op == "not":
            return f"(not {self.truth(e.operands[0], scope)})"
        if e.op in ("and", "or"):
            left, right = (self.truth(o, scope) for o in e.operands)
            return f"({left} {e.op} {right})"
        ops = [self.expr(o, scope) for o in e.operands]
        if e.op in ("==", "!=") and any(_scalar(o) for o in e.operands):
            # R.equal against a string, number or boolean is Lua's own equality.
            return f"({ops[0]} {'==' if e.op == '==' else '~='} {ops[1]})"
        if e.op == "neg":
            return f"R.arith('-', 0, {ops[0]})"
        if e.op in _ARITH:
            return f"R.arith({lua_string(e.op)}, {ops[0]}, {ops[1]})"
        return {
            "==": "R.equal({0}, {1})",
            "!=": "(not R.equal({0}, {1}))",
            "<": "R.less({0}, {1})",
            ">": "R.less({1}, {0})",
            "<=": "(not R.less({1}, {0}))",
            ">=": "(not R.less({0}, {1}))",
            "in": "R.contains({0}, {1})",
        }[e.op].format(*ops)

    def var(self, e: ir.Var, scope: dict[str, str], missing: bool) -> str:
        absent = ", R.MISSING" if missing else ""
        rest = "{" + ", ".join(lua_string(p) for p in e.var[1:]) + "}"
        if e.var[0] in scope:
            return f"R.lvar({scope[e.var[0]]}, {lua_string(e.var[0])}, {rest}{absent})"
        if len(e.var) == 1:  # one key: no path table per render
            return f"R.var1(c.data, {lua_string(e.var[0])}{absent})"
        path = "{" + ", ".join(lua_string(p) for p in e.var) + "}"
        return f"R.var(c.data, {path}{absent})"


def _scalar(e: ir.Expr) -> bool:
    return isinstance(e, ir.Literal) and e.literal is not None


def _size(nodes: tuple[ir.Node, ...]) -> int:
    """How many nodes a template has, nested ones included."""
    total = 0
    for node in nodes:
        total += 1
        if isinstance(node, ir.If):
            total += sum(_size(b.body) for b in node.branches)
        elif isinstance(node, ir.For):
            total += _size(node.body)
    return total


def _literal(value: str | int | float | bool | None) -> str:
    if value is None:
        return "R.NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return lua_string(value)


def lua_string(text: str) -> str:
    """A Lua string literal for any text (printable ASCII kept, other bytes escaped)."""
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= b < 127:
            out.append(ch)
        else:
            out.append(f"\\{b:03d}")
    return '"' + "".join(out) + '"'
