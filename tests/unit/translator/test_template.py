"""The template compiler: what it parses into, and that an error names the construct, its
position and what to do."""

from __future__ import annotations

import pytest

from gw.translator import ir
from gw.translator.gateway.template import TemplateError, parse_template


def test_guide_template_parses_into_the_tree() -> None:
    parsed = parse_template(
        '{% if default(data.error.message, "") != "" %}400{% else %}{{ header(":status") }}'
        "{% endif %}"
    )
    (node,) = parsed.nodes
    assert isinstance(node, ir.If)
    first, otherwise = node.branches
    assert first.condition == ir.Op(
        op="!=",
        operands=(
            ir.Call(
                call="default",
                args=(ir.Var(var=("data", "error", "message")), ir.Literal(literal="")),
            ),
            ir.Literal(literal=""),
        ),
    )
    assert first.body == (ir.Text(text="400"),)
    assert otherwise.condition is None
    assert parsed.calls == {"default", "header"}
    assert parsed.variables == {"data"}


def test_loops_sets_pipes_and_trimming() -> None:
    parsed = parse_template(
        "a {%- for k, v in obj %}{{ k | upper }}={{ v }}{% endfor -%}  b"
        "{% set n = 1 + 2 * 3 %}{{ n }}{{ loop_free }}"
    )
    assert parsed.nodes[0] == ir.Text(text="a")
    loop = parsed.nodes[1]
    assert isinstance(loop, ir.For) and loop.loop == ("k", "v")
    assert loop.body[0] == ir.Output(output=ir.Call(call="upper", args=(ir.Var(var=("k",)),)))
    assert parsed.nodes[2] == ir.Text(text="b")
    assign = parsed.nodes[3]
    assert isinstance(assign, ir.Set)
    assert assign.value == ir.Op(
        op="+",
        operands=(
            ir.Literal(literal=1),
            ir.Op(op="*", operands=(ir.Literal(literal=2), ir.Literal(literal=3))),
        ),
    )
    # Loop and set variables are not the template's data; other names are.
    assert parsed.variables == {"obj", "loop_free"}


def test_pointer_notation_with_advanced_templates() -> None:
    (node,) = parse_template("{{ time/start }}", pointer=True).nodes
    assert node == ir.Output(output=ir.Var(var=("time", "start")))
    (dotted,) = parse_template("{{ a.0.b }}").nodes
    assert dotted == ir.Output(output=ir.Var(var=("a", "0", "b")))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{ shout(1) }}", "{{ shout(1) }} at 1:1: unknown function shout()"),
        ('x\n  {{ substring("a") }}', "at 2:3: substring() takes 2 to 3 argument(s), not 1"),
        ("{% if a %}yes", "{% if a %} at 1:1: {% if %} is not closed with {% endif %}"),
        ("{% for x in xs %}", "{% for %} is not closed with {% endfor %}"),
        ("a{% endif %}", "{% endif %} without a matching opening statement"),
        ('{% include "x" %}', "statement {% include %} is not supported"),
        ("{% raw %}x{% endraw %}", "statement {% raw %} is not supported"),
        ("{{ a", "{{ at 1:1 is not closed with }}"),
        ("{{ 1 + }}", "the expression ends too early"),
        ("{{ (1 }}", "expected ')', found the end"),
        ("{{ a b }}", "unexpected 'b'"),
        ("{{ }}", "empty expression"),
        ("{{ a ? b }}", "cannot read '? b'"),
        ('{{ clusterMetadata("k") }}', "Envoy's Lua filter cannot read a cluster's metadata"),
        ("{% set 1 = 2 %}", "write {% set name = expression %}"),
        ("{% if a %}{% else %}{% else if b %}{% endif %}", "nothing may follow {% else %}"),
        ("{{ x | }}", "a function name must follow |"),
    ],
)
def test_errors_name_the_construct_and_where(text: str, message: str) -> None:
    with pytest.raises(TemplateError) as caught:
        parse_template(text)
    assert message in str(caught.value)


def test_a_template_is_parsed_once_per_text_with_its_texts_and_extractions() -> None:
    """Hosts and routes that share options parse the same templates: kept per text and
    kind of variable; what does not parse is not kept, and raises every time."""
    parse_template.cache_clear()
    text = 'a{{ header("x") }}b{% if extraction("org") %}c{% endif %}'
    parsed = parse_template(text)
    assert parse_template(text) is parsed
    assert parse_template(text, pointer=True) is not parsed
    assert parsed.texts == ("a", "b", "c")
    assert parsed.extractions == ("org",)
    for _ in range(2):
        with pytest.raises(TemplateError):
            parse_template("{% endif %}")
    assert parse_template.cache_info().currsize == 2
