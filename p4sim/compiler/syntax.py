"""Token stream, types, statements and expressions of the P4_16 parser (spec appendix grammar).

P4's grammar needs to know which identifiers name types (`(T) x` is a cast, `T x;` a
declaration); like p4c's lexer feedback we keep the set of type names declared so far.
"""

from __future__ import annotations

from p4sim.compiler import ast as A
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.lexer import Token

_BUILTIN_TYPES = {"packet_in", "packet_out"}
_TYPE_KW = {"bit", "int", "varbit", "bool", "error", "string", "void", "tuple", "match_kind"}
_BINARY = [
    ({"||"}, 1), ({"&&"}, 2), ({"==", "!="}, 3), ({"<", ">", "<=", ">="}, 4), ({"|"}, 5),
    ({"^"}, 6), ({"&"}, 7), ({"<<", ">>"}, 8), ({"++", "+", "-", "|+|", "|-|"}, 9), ({"*", "/", "%"}, 10),
]
_PREC = {op: p for ops, p in _BINARY for op in ops}
# compound assignments (P4_16 1.2.4): `x += y` is `x = x + y` with x evaluated once
OP_ASSIGN = {f"{op}=": op for op in ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "|+|", "|-|")}
# Statements and expressions nested in each other, all levels counted together (brackets, operators,
# operands of an operator chain, member/index/call suffixes, nested types). Deeper code is a located
# error, as clang's bracket depth (256) and CPython's parser (200 parentheses) bound theirs: every
# later pass here, and the code p4sim-switch generates from the JSON, recurse over this nesting, so
# 64 keeps them well inside Python's recursion limit (C11 guarantees 63 levels of parentheses).
MAX_NESTING = 64


class ExprParser:
    """Token helpers and the parsing of types, statements and expressions."""

    def __init__(self, toks: list[Token]) -> None:
        self.toks = toks
        self.i = 0
        self.type_names: set[str] = set(_BUILTIN_TYPES)
        self.scoped: list[set[str]] = []
        self.depth = 0  # nesting of the statement or expression being parsed (MAX_NESTING)

    def nest(self, levels: int = 1) -> None:
        """Enter `levels` more levels of nesting at the current token; a located error beyond MAX_NESTING.
        (The caller leaves them with `self.depth -= levels`; an error ends the parse.)"""
        self.depth += levels
        if self.depth > MAX_NESTING:
            raise CompileError(self.tok.loc, f"statements and expressions nested more than {MAX_NESTING} "
                               "levels deep here; split the code (e.g. into actions or local variables)")

    # ---- token helpers -------------------------------------------------------------
    @property
    def tok(self) -> Token:
        """The current token."""
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        """The token k positions ahead."""
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *texts: str) -> bool:
        """Is the current token one of these operators or keywords?"""
        t = self.tok
        return t.kind in ("op", "kw") and t.text in texts

    def take(self, *texts: str) -> Token | None:
        """Consume the current token if it is one of texts."""
        if self.at(*texts):
            t = self.tok
            self.i += 1
            return t
        return None

    def expect(self, text: str) -> Token:
        """Consume text or raise a syntax error."""
        t = self.take(text)
        if t is None:
            raise CompileError(self.tok.loc, f"expected '{text}', found '{self.tok.text}'")
        return t

    def ident(self, what: str = "a name") -> str:
        """Consume an identifier (or a keyword allowed as a name)."""
        t = self.tok
        # a few keywords are allowed as names (p4c's nonTypeName): apply, key, actions, state...
        if t.kind == "ident" or (t.kind == "kw" and t.text in ("apply", "key", "state", "entries", "type",
                                                             "priority", "list")):
            self.i += 1
            return t.text
        raise CompileError(t.loc, f"expected {what}, found '{t.text}'")

    def is_type_name(self, name: str) -> bool:
        """Does name denote a type here?"""
        return name in self.type_names or any(name in s for s in self.scoped)

    def _shift_gt(self) -> bool:
        """`>>` is two adjacent '>' tokens (so that `bit<bit<8>>` closes twice)."""
        return self.at(">") and self.peek().kind == "op" and self.peek().text == ">" and self.peek().adjacent


    # ---- types ---------------------------------------------------------------------
    def const_rest(self, loc: Loc, annos: list[A.Annotation]) -> A.ConstDecl:
        """`T name = expr;` after `const`."""
        typ = self.type_()
        name = self.ident()
        self.expect("=")
        init = self.expr()
        self.expect(";")
        return A.ConstDecl(loc, typ, name, init, annos)

    def type_(self) -> A.TypeSyn:
        """A type: bit<W>, int<W>, varbit<W>, tuple<...>, a named (generic) type, stacks."""
        self.nest()
        typ = self._type()
        self.depth -= 1
        return typ

    def _type(self) -> A.TypeSyn:
        t = self.tok
        loc = t.loc
        if self.at("bit", "int"):
            self.i += 1
            signed = t.text == "int"
            if self.take("<"):
                w = self.type_arg_expr()
                self.close_angle()
                return A.BitT(loc, w, signed)
            if signed:
                return A.NamedT(loc, "int")
            return A.BitT(loc, None, False)
        if self.take("varbit"):
            self.expect("<")
            w = self.type_arg_expr()
            self.close_angle()
            return A.VarbitT(loc, w)
        if self.take("tuple"):
            self.expect("<")
            args = [self.type_()]
            while self.take(","):
                args.append(self.type_())
            self.close_angle()
            return A.TupleT(loc, args)
        if self.at("bool", "error", "string", "void", "match_kind"):
            self.i += 1
            base: A.TypeSyn = A.NamedT(loc, t.text)
        elif t.kind == "ident":
            self.i += 1
            name = t.text
            if name == "_":
                return A.NamedT(loc, "_")
            args: list[A.TypeSyn] = []
            if self.at("<"):
                self.i += 1
                args.append(self.type_())
                while self.take(","):
                    args.append(self.type_())
                self.close_angle()
            base = A.NamedT(loc, name, args)
        elif self.take("."):
            return self._type()
        else:
            raise CompileError(loc, f"expected a type, found '{t.text}'")
        while self.at("["):
            self.i += 1
            size = self.expr()
            self.expect("]")
            base = A.StackT(loc, base, size)
        return base

    def type_arg_expr(self) -> A.Expr:
        """The width expression inside bit<...>: a literal, a name or a parenthesized expression (whose
        `>` would otherwise close the type)."""
        return self.primary()

    def close_angle(self) -> None:
        """The `>` closing type arguments."""
        self.expect(">")

    def looks_like_type(self) -> bool:
        """At the start of a declaration (a type followed by a name)?"""
        t = self.tok
        if t.kind == "kw":
            return t.text in _TYPE_KW
        if t.kind != "ident":
            return False
        if self.is_type_name(t.text):
            nxt = self.peek()
            return not (nxt.kind == "op" and nxt.text in (".", "("))
        return False

    # ---- statements ----------------------------------------------------------------
    def block(self) -> A.Block:
        """A `{ ... }` block statement."""
        loc = self.expect("{").loc
        stmts = []
        while not self.take("}"):
            if self.tok.kind == "eof":
                raise CompileError(loc, "unterminated block")
            stmts.append(self.statement())
        return A.Block(loc, stmts)

    def statement(self) -> A.Stmt:
        """One statement."""
        self.nest()
        stmt = self._statement()
        self.depth -= 1
        return stmt

    def _branch(self) -> A.Stmt:
        """The statement of an if or else branch: its braces are no level of their own."""
        return self.block() if self.at("{") else self.statement()

    def _statement(self) -> A.Stmt:
        annos = self.annotations()
        t = self.tok
        loc = t.loc
        if self.at("{"):
            return self.block()
        if self.take(";"):
            return A.Empty(loc)
        if self.take("if"):
            self.expect("(")
            c = self.expr()
            self.expect(")")
            then = self._branch()
            other = self._branch() if self.take("else") else None
            return A.If(loc, c, then, other)
        if self.take("exit"):
            self.expect(";")
            return A.Exit(loc)
        if self.take("for"):
            return self._for(loc)
        if self.take("break"):
            self.expect(";")
            return A.Break(loc)
        if self.take("continue"):
            self.expect(";")
            return A.Continue(loc)
        if self.take("return"):
            e = None if self.at(";") else self.expr()
            self.expect(";")
            return A.Return(loc, e)
        if self.take("switch"):
            self.expect("(")
            e = self.expr()
            self.expect(")")
            self.expect("{")
            cases = []
            while not self.take("}"):
                cloc = self.tok.loc
                label: A.Expr
                if self.take("default"):
                    label = A.Default(cloc)
                else:
                    label = self.expr()
                self.expect(":")
                body = self.block() if self.at("{") else None
                cases.append(A.SwitchCase([label], body, cloc))
            return A.Switch(loc, e, cases)
        if self.take("const"):
            return self.const_rest(loc, annos)
        if self.looks_like_type():
            typ = self.type_()
            if self.at("("):
                raise CompileError(loc, "instantiations are not allowed inside blocks")
            name = self.ident("a variable name")
            init = self.expr() if self.take("=") else None
            self.expect(";")
            return A.VarDecl(loc, typ, name, init, annos)
        lhs = self.expr()
        if self.take("=", *OP_ASSIGN):
            op = OP_ASSIGN.get(self.toks[self.i - 1].text, "")
            rhs = self.expr()
            self.expect(";")
            return A.Assign(loc, lhs, rhs, op)
        self.expect(";")
        if not isinstance(lhs, A.Call):
            raise CompileError(loc, "expected an assignment or a method call")
        return A.CallStmt(loc, lhs)

    def _named_list(self, loc: Loc) -> A.ListExpr:
        """`{name = expr, ...}` (a struct or header initializer)."""
        names: list[str] = []
        items: list[A.Expr] = []
        while True:
            names.append(self.ident("a field name"))
            self.expect("=")
            items.append(self.expr())
            if self.take("}"):
                return A.ListExpr(loc, items, names)
            self.expect(",")
            if self.take("}"):
                return A.ListExpr(loc, items, names)

    def _for(self, loc: Loc) -> A.For:
        """`for (init; cond; update) body`; init and update are comma-separated simple statements."""
        self.expect("(")
        init = self._simple_list(";")
        cond = None if self.at(";") else self.expr()
        self.expect(";")
        update = self._simple_list(")")
        return A.For(loc, init, cond, update, self._branch())

    def _simple_list(self, close: str) -> list[A.Stmt]:
        out: list[A.Stmt] = []
        if self.take(close):
            return out
        while True:
            sloc = self.tok.loc
            if self.looks_like_type():
                typ = self.type_()
                name = self.ident("a variable name")
                if self.at("in"):
                    raise CompileError(self.tok.loc, "for-in loops are not supported (use for (init; cond; update))")
                self.expect("=")
                out.append(A.VarDecl(sloc, typ, name, self.expr()))
            else:
                lhs = self.expr()
                if self.take("=", *OP_ASSIGN):
                    out.append(A.Assign(sloc, lhs, self.expr(), OP_ASSIGN.get(self.toks[self.i - 1].text, "")))
                elif isinstance(lhs, A.Call):
                    out.append(A.CallStmt(sloc, lhs))
                else:
                    raise CompileError(sloc, "expected an assignment, a declaration or a call in a for loop header")
            if self.take(close):
                return out
            self.expect(",")

    # ---- expressions ---------------------------------------------------------------
    def expr_list(self, close: str) -> list[A.Expr]:
        """Comma-separated expressions up to close."""
        out: list[A.Expr] = []
        if self.take(close):
            return out
        while True:
            out.append(self.expr())
            if self.take(close):
                return out
            self.expect(",")

    def args(self) -> list[A.Arg]:
        """A parenthesized argument list (arguments may be named)."""
        self.expect("(")
        out: list[A.Arg] = []
        if self.take(")"):
            return out
        while True:
            name = None
            if self.tok.kind == "ident" and self.peek().kind == "op" and self.peek().text == "=":
                name = self.tok.text
                self.i += 2
            out.append(A.Arg(name, self.expr()))
            if self.take(")"):
                return out
            self.expect(",")

    def expr(self) -> A.Expr:
        """An expression, including `?:`."""
        self.nest()
        c = self.binary(1)
        if self.at("?"):
            loc = self.expect("?").loc
            a = self.expr()
            self.expect(":")
            b = self.expr()
            c = A.Ternary(loc, c, a, b)
        self.depth -= 1
        return c

    def binary(self, min_prec: int) -> A.Expr:
        """Binary operators by precedence climbing (spec table of precedences)."""
        left = self.unary()
        chain = 0  # `a + b + c` nests to the left: one level per operator
        while True:
            t = self.tok
            op = t.text
            width = 1
            if t.kind == "op" and self._shift_gt():
                op, width = ">>", 2
            prec = _PREC.get(op) if t.kind == "op" else None
            if prec is None or prec < min_prec:
                self.depth -= chain
                return left
            self.nest()
            chain += 1
            self.i += width
            right = self.binary(prec + 1)
            left = A.Binary(t.loc, op, left, right)

    def unary(self) -> A.Expr:
        """Prefix operators and casts."""
        t = self.tok
        if self.at("!", "~", "-", "+"):
            self.i += 1
            self.nest()
            e: A.Expr = A.Unary(t.loc, t.text, self.unary())
            self.depth -= 1
            return e
        if self.at("(") and self._is_cast():
            self.i += 1
            typ = self.type_()
            self.expect(")")
            self.nest()
            e = A.Cast(t.loc, typ, self.unary())
            self.depth -= 1
            return e
        return self.postfix(self.primary())

    def _is_cast(self) -> bool:
        nxt = self.peek()
        if nxt.kind == "kw" and nxt.text in ("bit", "int", "varbit", "bool", "error", "tuple", "string"):
            return True
        if nxt.kind == "ident" and self.is_type_name(nxt.text):
            after = self.peek(2)
            return after.kind == "op" and after.text in (")", "<", "[")
        return False

    def primary(self) -> A.Expr:
        """Literals, names, parenthesized expressions and lists."""
        t = self.tok
        loc = t.loc
        if t.kind == "int":
            self.i += 1
            return A.IntLit(loc, t.value, t.width, t.signed, t.base)
        if t.kind == "string":
            self.i += 1
            return A.StrLit(loc, t.text)
        if self.take("true"):
            return A.BoolLit(loc, True)
        if self.take("false"):
            return A.BoolLit(loc, False)
        if self.take("("):
            e = self.expr()
            self.expect(")")
            return e
        if self.take("{"):
            if self.tok.kind == "ident" and self.peek().kind == "op" and self.peek().text == "=":
                return self._named_list(loc)
            items = self.expr_list("}")
            return A.ListExpr(loc, items)
        if self.take("."):
            return A.Name(loc, self.ident())
        if t.kind == "ident" or (t.kind == "kw" and t.text in ("error", "apply", "key", "type", "state", "priority")):
            self.i += 1
            return A.Name(loc, t.text)
        if self.at("bit", "int", "bool"):
            raise CompileError(loc, f"unexpected type '{t.text}' in an expression (missing parentheses for a cast?)")
        raise CompileError(loc, f"expected an expression, found '{t.text}'")

    def postfix(self, e: A.Expr) -> A.Expr:
        """Member access, indexing, slices and calls."""
        levels = 0  # `a.b[1].c` nests to the left: one level per suffix
        while self.at(".", "[", "(") or (self.at("<") and self._type_args_call()):
            self.nest()
            levels += 1
            t = self.tok
            if self.take("."):
                e = A.Member(t.loc, e, self.ident("a member name"))
            elif self.take("["):
                a = self.expr()
                if self.take(":"):
                    b = self.expr()
                    self.expect("]")
                    e = A.Slice(t.loc, e, a, b)
                else:
                    self.expect("]")
                    e = A.Index(t.loc, e, a)
            elif self.at("("):
                e = A.Call(t.loc, e, self.args())
            else:  # f<T, ...>(args)
                self.i += 1
                targs = [self.type_()]
                while self.take(","):
                    targs.append(self.type_())
                self.close_angle()
                call = A.Call(t.loc, e, self.args())
                call.type_args = targs
                e = call
        self.depth -= levels
        return e

    def _type_args_call(self) -> bool:
        # f<T>(...): only when the '<' is followed by a type and a matching '>' then '('
        nxt = self.peek()
        if not (nxt.kind == "kw" and nxt.text in ("bit", "int", "bool")) and not (
                nxt.kind == "ident" and self.is_type_name(nxt.text)):
            return False
        depth, j = 0, self.i
        while j < len(self.toks):
            tk = self.toks[j]
            if tk.kind == "op" and tk.text == "<":
                depth += 1
            elif tk.kind == "op" and tk.text == ">":
                depth -= 1
                if depth == 0:
                    nt = self.toks[j + 1]
                    return nt.kind == "op" and nt.text == "("
            elif tk.kind == "op" and tk.text in (";", "{", "}"):
                return False
            j += 1
        return False

