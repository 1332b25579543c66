"""An AuthConfig's configs as one decision: the steps in order, or as `booleanExpr` says.

Without `booleanExpr` every step must allow: they run in order and the first that denies
answers the request (the later ones do not run). With it, the expression runs left to
right and stops as soon as its result is known; each step runs at most once per request.
Steps share a `State` (what the OIDC login identified, an API key's metadata, what a
passthrough service returned), so a later step sees what earlier ones learnt; an allowed
request gets the headers of every step that allowed it.

When the result is "deny", the answer is the first denial a step gave (a login redirect, a
`401` with its `www-authenticate`, ...); when no step denied (`!a` where `a` allowed), it
is a plain `403`. A request that is a step's own (an OIDC callback, logout) goes to that
step alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gw.extauth.checks import Check
from gw.extauth.decisions import Allow, Decision, Deny, Request, State, merge
from gw.extauth.session_pass import Passes
from gw.wire import extauth_expr
from gw.wire.extauth import AuthConfig
from gw.wire.extauth_expr import AllOf, AnyOf, Expr, Not, Ref

FORBIDDEN = Deny(403)


@dataclass(slots=True)
class _Run:
    """One request's way through the chain."""

    request: Request
    state: State = field(default_factory=dict)
    results: dict[str, bool] = field(default_factory=dict)
    allows: list[Allow] = field(default_factory=list)
    denial: Deny | None = None


class Chain:
    def __init__(self, config: AuthConfig, checks: list[Check]) -> None:
        self.config = config
        self.checks = {step.name: check for step, check in zip(config.steps, checks, strict=True)}
        self._ordered = checks
        names = frozenset(self.checks)
        self.expr: Expr | None = (
            extauth_expr.parse(config.boolean_expr, names) if config.boolean_expr else None
        )
        self.user_id_header = config.user_id_header
        self.passes = Passes.for_config(config)

    async def check(self, request: Request) -> Decision:
        for check in self._ordered:
            if check.owns(request):
                decision = await check.check(request, {})
                return self.passes.cleared(decision) if self.passes else decision
        if self.expr is None and len(self._ordered) == 1:
            return self._identified(await self._ordered[0].check(request, {}))
        run = _Run(request)
        if self.expr is None:
            allowed = await self._all(tuple(Ref(n) for n in self.checks), run)
        else:
            allowed = await self._eval(self.expr, run)
        if not allowed:
            return run.denial or FORBIDDEN
        return self._identified(merge(run.allows) if run.allows else Allow())

    async def close(self) -> None:
        for check in self._ordered:
            await check.close()

    async def _eval(self, expr: Expr, run: _Run) -> bool:
        match expr:
            case Ref(name):
                return await self._step(name, run)
            case Not(operand):
                return not await self._eval(operand, run)
            case AllOf(operands):
                return await self._all(operands, run)
            case AnyOf(operands):
                for operand in operands:
                    if await self._eval(operand, run):
                        return True
                return False

    async def _all(self, operands: tuple[Expr, ...], run: _Run) -> bool:
        for operand in operands:
            if not await self._eval(operand, run):
                return False
        return True

    async def _step(self, name: str, run: _Run) -> bool:
        if name in run.results:
            return run.results[name]
        decision = await self.checks[name].check(run.request, run.state)
        allowed = isinstance(decision, Allow)
        if isinstance(decision, Allow):
            run.allows.append(decision)
        elif run.denial is None:
            run.denial = decision
        run.results[name] = allowed
        return allowed

    def _identified(self, decision: Decision) -> Decision:
        """Settings `userIdHeader`: the user a step identified goes upstream in it; a copy
        the client sent never does."""
        header = self.user_id_header
        if header is None or not isinstance(decision, Allow):
            return decision
        if decision.user is not None:
            return replace(decision, headers=(*decision.headers, (header, decision.user)))
        if header in decision.remove_headers:
            return decision
        return replace(decision, remove_headers=(*decision.remove_headers, header))
