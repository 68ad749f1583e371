"""Recursive-descent parser for P4_16 (spec appendix grammar), typedef-aware.

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


class Parser:
    """Parses a token list into an ast.Program."""

    def __init__(self, toks: list[Token]) -> None:
        self.toks = toks
        self.i = 0
        self.type_names: set[str] = set(_BUILTIN_TYPES)
        self.scoped: list[set[str]] = []

    # ---- token helpers -------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *texts: str) -> bool:
        t = self.tok
        return t.kind in ("op", "kw") and t.text in texts

    def take(self, *texts: str) -> Token | None:
        if self.at(*texts):
            t = self.tok
            self.i += 1
            return t
        return None

    def expect(self, text: str) -> Token:
        t = self.take(text)
        if t is None:
            raise CompileError(self.tok.loc, f"expected '{text}', found '{self.tok.text}'")
        return t

    def ident(self, what: str = "a name") -> str:
        t = self.tok
        # a few keywords are allowed as names (p4c's nonTypeName): apply, key, actions, state...
        if t.kind == "ident" or (t.kind == "kw" and t.text in ("apply", "key", "state", "entries", "type",
                                                             "priority", "list")):
            self.i += 1
            return t.text
        raise CompileError(t.loc, f"expected {what}, found '{t.text}'")

    def is_type_name(self, name: str) -> bool:
        return name in self.type_names or any(name in s for s in self.scoped)

    def _shift_gt(self) -> bool:
        """`>>` is two adjacent '>' tokens (so that `bit<bit<8>>` closes twice)."""
        return self.at(">") and self.peek().kind == "op" and self.peek().text == ">" and self.peek().adjacent

    # ---- program -------------------------------------------------------------------
    def program(self) -> A.Program:
        """Parse the whole token list."""
        decls = []
        while self.tok.kind != "eof":
            if self.take(";"):
                continue
            decls.append(self.declaration())
        return A.Program(decls)

    def annotations(self) -> list[A.Annotation]:
        annos = []
        while self.at("@"):
            loc = self.expect("@").loc
            name = self.tok.text
            self.i += 1
            args: list = []
            if self.at("(") and self.tok.adjacent:
                self.i += 1
                depth = 1
                while True:
                    t = self.tok
                    if t.kind == "eof":
                        raise CompileError(loc, f"unterminated annotation @{name}")
                    self.i += 1
                    if t.kind == "op" and t.text == "(":
                        depth += 1
                    elif t.kind == "op" and t.text == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    if t.kind == "string":
                        args.append(t.text)
                    elif t.kind == "int":
                        args.append(t.value)
                    elif not (t.kind == "op" and t.text == ","):
                        args.append(t.text)
            elif self.at("["):
                raise CompileError(loc, f"structured annotation @{name}[...] is not supported")
            annos.append(A.Annotation(name, args, loc))
        return annos

    def declaration(self) -> object:
        annos = self.annotations()
        t = self.tok
        loc = t.loc
        if self.take("const"):
            typ = self.type_()
            name = self.ident()
            self.expect("=")
            init = self.expr()
            self.expect(";")
            return A.ConstDecl(loc, typ, name, init, annos)
        if self.at("typedef", "type"):
            new = self.tok.text == "type"
            self.i += 1
            typ = self.type_()
            name = self.ident()
            self.expect(";")
            self.type_names.add(name)
            return A.Typedef(loc, name, annos, typ, new)
        if self.at("header", "struct", "header_union"):
            kind = self.tok.text
            self.i += 1
            name = self.ident()
            self.type_names.add(name)
            tparams = self.type_params()
            self.scoped.append(set(tparams))
            self.expect("{")
            fields = []
            while not self.take("}"):
                fa = self.annotations()
                floc = self.tok.loc
                ft = self.type_()
                fn = self.ident("a field name")
                self.expect(";")
                fields.append(A.FieldDecl(ft, fn, fa, floc))
            self.scoped.pop()
            return A.StructLike(loc, name, annos, kind, fields, tparams)
        if self.take("enum"):
            under = None
            if self.at("bit", "int"):
                under = self.type_()
            name = self.ident()
            self.type_names.add(name)
            self.expect("{")
            members, values = [], []
            while not self.take("}"):
                self.annotations()
                members.append(self.ident("an enum member"))
                if self.take("="):
                    values.append(self.expr())
                if not self.take(","):
                    self.expect("}")
                    break
            return A.EnumDecl(loc, name, annos, members, under, values)
        if self.at("error", "match_kind"):
            kind = self.tok.text
            self.i += 1
            self.expect("{")
            members = []
            while not self.take("}"):
                members.append(self.ident())
                if not self.take(","):
                    self.expect("}")
                    break
            cls = A.ErrorDecl if kind == "error" else A.MatchKindDecl
            return cls(loc, kind, annos, members)
        if self.take("extern"):
            return self.extern_decl(loc, annos)
        if self.at("parser"):
            return self.parser_decl(annos)
        if self.at("control"):
            return self.control_decl(annos)
        if self.take("package"):
            name = self.ident()
            self.type_names.add(name)
            tps = self.type_params()
            self.scoped.append(set(tps))
            params = self.params()
            self.scoped.pop()
            self.expect(";")
            return A.BlockTypeDecl(loc, name, annos, "package", tps, params)
        if self.at("action"):
            return self.action_decl(annos)
        if self.at("abstract"):
            raise CompileError(loc, "abstract methods outside extern declarations are not supported")
        return self.instance_or_function(annos)

    def instance_or_function(self, annos: list[A.Annotation]) -> object:
        loc = self.tok.loc
        typ = self.type_()
        if self.at("("):
            args = self.args()
            name = self.ident("an instance name")
            if self.at("=") or self.at("{"):
                raise CompileError(self.tok.loc, "abstract method implementations in instances are not supported")
            self.expect(";")
            return A.Instance(loc, name, annos, typ, args)
        name = self.ident()
        tps = self.type_params()
        if self.at("("):
            self.scoped.append(set(tps))
            params = self.params()
            body = self.block() if self.at("{") else None
            self.scoped.pop()
            if body is None:
                self.expect(";")
            return A.FunctionDecl(loc, name, annos, typ, tps, params, body)
        raise CompileError(self.tok.loc, f"expected a declaration, found '{self.tok.text}'")

    def type_params(self) -> list[str]:
        out: list[str] = []
        if self.take("<"):
            while True:
                out.append(self.ident("a type parameter"))
                if self.take(">"):
                    return out
                self.expect(",")
        return out

    def params(self) -> list[A.Param]:
        self.expect("(")
        out: list[A.Param] = []
        if self.take(")"):
            return out
        while True:
            annos = self.annotations()
            loc = self.tok.loc
            d = ""
            t = self.take("in", "out", "inout")
            if t:
                d = t.text
            typ = self.type_()
            name = self.ident("a parameter name")
            default = self.expr() if self.take("=") else None
            out.append(A.Param(d, typ, name, annos, loc, default))
            if self.take(")"):
                return out
            self.expect(",")

    def extern_decl(self, loc: Loc, annos: list[A.Annotation]) -> object:
        # extern function: `extern T f<...>(...)`; extern object: `extern Name<...> { ... }`
        save = self.i
        name = self.ident() if self.tok.kind == "ident" else None
        if name is not None and (self.at("<") or self.at("{")):
            self.type_names.add(name)
            tps = self.type_params()
            if self.at("{"):
                self.scoped.append(set(tps))
                self.expect("{")
                methods = []
                while not self.take("}"):
                    ma = self.annotations()
                    mloc = self.tok.loc
                    abstract = bool(self.take("abstract"))
                    if self.tok.kind == "ident" and self.tok.text == name and self.peek().text == "(":
                        self.i += 1
                        params = self.params()
                        self.expect(";")
                        methods.append(A.MethodDecl(mloc, name, ma, None, [], params, abstract))
                        continue
                    ret = self.type_()
                    mname = self.ident("a method name")
                    mtps = self.type_params()
                    self.scoped.append(set(mtps))
                    params = self.params()
                    self.scoped.pop()
                    self.expect(";")
                    methods.append(A.MethodDecl(mloc, mname, ma, ret, mtps, params, abstract))
                self.scoped.pop()
                return A.ExternDecl(loc, name, annos, tps, methods)
        self.i = save
        ret = self.type_()
        fname = self.ident("a function name")
        tps = self.type_params()
        self.scoped.append(set(tps))
        params = self.params()
        self.scoped.pop()
        self.expect(";")
        return A.FunctionDecl(loc, fname, annos, ret, tps, params)

    def parser_decl(self, annos: list[A.Annotation]) -> object:
        loc = self.expect("parser").loc
        name = self.ident()
        self.type_names.add(name)
        tps = self.type_params()
        self.scoped.append(set(tps))
        params = self.params()
        if self.take(";"):
            self.scoped.pop()
            return A.BlockTypeDecl(loc, name, annos, "parser", tps, params)
        ctor = self.params() if self.at("(") else []
        self.expect("{")
        locals_, states = [], []
        while not self.take("}"):
            la = self.annotations()
            if self.at("state"):
                states.append(self.state(la))
            else:
                locals_.append(self.local_decl(la))
        self.scoped.pop()
        return A.ParserDecl(loc, name, annos, tps, params, ctor, locals_, states)

    def state(self, annos: list[A.Annotation]) -> A.State:
        loc = self.expect("state").loc
        name = self.ident("a state name")
        self.expect("{")
        stmts: list[A.Stmt] = []
        st = A.State(loc, name, annos, stmts)
        while not self.at("transition", "}"):
            stmts.append(self.statement())
        if self.at("}"):
            raise CompileError(self.tok.loc, f"state {name!r} has no transition statement")
        st.trans_loc = self.expect("transition").loc
        if self.take("select"):
            self.expect("(")
            st.select = self.expr_list(")")
            self.expect("{")
            while not self.take("}"):
                cloc = self.tok.loc
                ks = self.keyset()
                self.expect(":")
                st.cases.append(A.SelectCase(ks, self.ident("a state name"), cloc))
                self.expect(";")
        else:
            st.next = self.ident("a state name")
            self.expect(";")
        self.expect("}")
        return st

    def keyset(self) -> A.Expr:
        loc = self.tok.loc
        if self.at("(") and self._tuple_keyset():
            self.expect("(")
            items = []
            while True:
                items.append(self.simple_keyset())
                if self.take(")"):
                    break
                self.expect(",")
            return A.ListExpr(loc, items)
        return self.simple_keyset()

    def _tuple_keyset(self) -> bool:
        # `(a, b)` is a tuple keyset; `(a)` or `(a + 1) &&& m` is an expression
        depth, j = 0, self.i
        while j < len(self.toks):
            t = self.toks[j]
            if t.kind == "op" and t.text in "([{":
                depth += 1
            elif t.kind == "op" and t.text in ")]}":
                depth -= 1
                if depth == 0:
                    return False
            elif t.kind == "op" and t.text == "," and depth == 1:
                return True
            j += 1
        return False

    def simple_keyset(self) -> A.Expr:
        loc = self.tok.loc
        if self.take("default") or (self.tok.kind == "ident" and self.tok.text == "_" and self._eat()):
            return A.Default(loc)
        e = self.expr()
        if self.take("&&&"):
            return A.Mask(loc, e, self.expr())
        if self.take(".."):
            return A.Range(loc, e, self.expr())
        return e

    def _eat(self) -> bool:
        self.i += 1
        return True

    def control_decl(self, annos: list[A.Annotation]) -> object:
        loc = self.expect("control").loc
        name = self.ident()
        self.type_names.add(name)
        tps = self.type_params()
        self.scoped.append(set(tps))
        params = self.params()
        if self.take(";"):
            self.scoped.pop()
            return A.BlockTypeDecl(loc, name, annos, "control", tps, params)
        ctor = self.params() if self.at("(") else []
        self.expect("{")
        locals_ = []
        while not self.at("apply"):
            if self.tok.kind == "eof" or self.at("}"):
                raise CompileError(self.tok.loc, f"control {name!r} has no apply block")
            la = self.annotations()
            if self.at("apply"):
                break
            locals_.append(self.local_decl(la))
        self.expect("apply")
        body = self.block()
        self.expect("}")
        self.scoped.pop()
        return A.ControlDecl(loc, name, annos, tps, params, ctor, locals_, body)

    def local_decl(self, annos: list[A.Annotation]) -> object:
        loc = self.tok.loc
        if self.at("action"):
            return self.action_decl(annos)
        if self.at("table"):
            return self.table_decl(annos)
        if self.take("const"):
            typ = self.type_()
            name = self.ident()
            self.expect("=")
            init = self.expr()
            self.expect(";")
            return A.ConstDecl(loc, typ, name, init, annos)
        if self.at("state"):
            raise CompileError(loc, "states are only allowed in parsers")
        typ = self.type_()
        if self.at("("):
            args = self.args()
            name = self.ident("an instance name")
            self.expect(";")
            return A.Instance(loc, name, annos, typ, args)
        name = self.ident("a variable name")
        init = self.expr() if self.take("=") else None
        self.expect(";")
        return A.VarDecl(loc, typ, name, init, annos)

    def action_decl(self, annos: list[A.Annotation]) -> A.ActionDecl:
        loc = self.expect("action").loc
        name = self.ident("an action name")
        params = self.params()
        return A.ActionDecl(loc, name, annos, params, self.block())

    def table_decl(self, annos: list[A.Annotation]) -> A.TableDecl:
        loc = self.expect("table").loc
        name = self.ident("a table name")
        t = A.TableDecl(loc, name, annos)
        self.expect("{")
        while not self.take("}"):
            pa = self.annotations()
            ploc = self.tok.loc
            const = bool(self.take("const"))
            if self.take("key"):
                self.expect("=")
                self.expect("{")
                while not self.take("}"):
                    kloc = self.tok.loc
                    e = self.expr()
                    self.expect(":")
                    mk = self.ident("a match kind")
                    ka = self.annotations()
                    self.expect(";")
                    t.keys.append(A.KeyElem(e, mk, ka, kloc))
            elif self.tok.kind == "ident" and self.tok.text == "actions":
                self.i += 1
                self.expect("=")
                self.expect("{")
                while not self.take("}"):
                    aa = self.annotations()
                    t.actions.append(self.action_ref(aa))
                    self.expect(";")
            elif self.take("entries"):
                self.expect("=")
                self.expect("{")
                t.entries, t.entries_const = [], const
                while not self.take("}"):
                    ea = self.annotations()
                    eloc = self.tok.loc
                    prio = None
                    if self.take("priority"):
                        self.expect("=")
                        prio = self.expr()
                        self.expect(":")
                    ks = self.keyset()
                    keys = ks.items if isinstance(ks, A.ListExpr) else [ks]
                    self.expect(":")
                    ar = self.action_ref([])
                    self.expect(";")
                    t.entries.append(A.Entry(keys, ar, ea, eloc, prio))
            elif self.tok.kind == "ident" and self.tok.text == "default_action":
                self.i += 1
                self.expect("=")
                t.default_action = self.action_ref(pa)
                t.default_const = const
                self.expect(";")
            else:
                pname = self.ident("a table property")
                self.expect("=")
                t.props[pname] = self.expr()
                t.props[pname].loc = ploc
                self.expect(";")
        return t

    def action_ref(self, annos: list[A.Annotation]) -> A.ActionRef:
        loc = self.tok.loc
        name = self.ident("an action name")
        while self.take("."):
            name += "." + self.ident()
        args = self.args() if self.at("(") else []
        return A.ActionRef(name, args, annos, loc)

    # ---- types ---------------------------------------------------------------------
    def type_(self) -> A.TypeSyn:
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
            return self.type_()
        else:
            raise CompileError(loc, f"expected a type, found '{t.text}'")
        while self.at("["):
            self.i += 1
            size = self.expr()
            self.expect("]")
            base = A.StackT(loc, base, size)
        return base

    def type_arg_expr(self) -> A.Expr:
        if self.at("("):
            return self.expr()
        return self.primary()

    def close_angle(self) -> None:
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
        loc = self.expect("{").loc
        stmts = []
        while not self.take("}"):
            if self.tok.kind == "eof":
                raise CompileError(loc, "unterminated block")
            stmts.append(self.statement())
        return A.Block(loc, stmts)

    def statement(self) -> A.Stmt:
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
            then = self.statement()
            other = self.statement() if self.take("else") else None
            return A.If(loc, c, then, other)
        if self.take("exit"):
            self.expect(";")
            return A.Exit(loc)
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
            typ = self.type_()
            name = self.ident()
            self.expect("=")
            init = self.expr()
            self.expect(";")
            return A.ConstDecl(loc, typ, name, init, annos)
        if self.looks_like_type():
            typ = self.type_()
            if self.at("("):
                raise CompileError(loc, "instantiations are not allowed inside blocks")
            name = self.ident("a variable name")
            init = self.expr() if self.take("=") else None
            self.expect(";")
            return A.VarDecl(loc, typ, name, init, annos)
        lhs = self.expr()
        if self.take("="):
            rhs = self.expr()
            self.expect(";")
            return A.Assign(loc, lhs, rhs)
        self.expect(";")
        if not isinstance(lhs, A.Call):
            raise CompileError(loc, "expected an assignment or a method call")
        return A.CallStmt(loc, lhs)

    # ---- expressions ---------------------------------------------------------------
    def expr_list(self, close: str) -> list[A.Expr]:
        out: list[A.Expr] = []
        if self.take(close):
            return out
        while True:
            out.append(self.expr())
            if self.take(close):
                return out
            self.expect(",")

    def args(self) -> list[A.Arg]:
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
        c = self.binary(1)
        if self.at("?"):
            loc = self.expect("?").loc
            a = self.expr()
            self.expect(":")
            b = self.expr()
            return A.Ternary(loc, c, a, b)
        return c

    def binary(self, min_prec: int) -> A.Expr:
        left = self.unary()
        while True:
            t = self.tok
            if t.kind != "op":
                return left
            op = t.text
            width = 1
            if self._shift_gt():
                op, width = ">>", 2
            prec = _PREC.get(op)
            if prec is None or prec < min_prec:
                return left
            self.i += width
            right = self.binary(prec + 1)
            left = A.Binary(t.loc, op, left, right)

    def unary(self) -> A.Expr:
        t = self.tok
        if self.at("!", "~", "-", "+"):
            self.i += 1
            return A.Unary(t.loc, t.text, self.unary())
        if self.at("(") and self._is_cast():
            self.i += 1
            typ = self.type_()
            self.expect(")")
            return A.Cast(t.loc, typ, self.unary())
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
        t = self.tok
        loc = t.loc
        if t.kind == "int":
            self.i += 1
            return A.IntLit(loc, t.value, t.width, t.signed)
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
            items = self.expr_list("}")
            return A.ListExpr(loc, items)
        if self.take("."):
            return A.Name(loc, self.ident())
        if t.kind == "ident" or (t.kind == "kw" and t.text in ("error", "apply", "key", "type", "state")):
            self.i += 1
            return A.Name(loc, t.text)
        if self.at("bit", "int", "bool"):
            raise CompileError(loc, f"unexpected type '{t.text}' in an expression (missing parentheses for a cast?)")
        raise CompileError(loc, f"expected an expression, found '{t.text}'")

    def postfix(self, e: A.Expr) -> A.Expr:
        while True:
            t = self.tok
            if self.take("."):
                e = A.Member(t.loc, e, self.ident("a member name"))
            elif self.at("["):
                self.i += 1
                a = self.expr()
                if self.take(":"):
                    b = self.expr()
                    self.expect("]")
                    e = A.Slice(t.loc, e, a, b)
                else:
                    self.expect("]")
                    e = A.Index(t.loc, e, a)
            elif self.at("(") :
                e = A.Call(t.loc, e, self.args())
            elif self.at("<") and self._type_args_call():
                self.i += 1
                targs = [self.type_()]
                while self.take(","):
                    targs.append(self.type_())
                self.close_angle()
                call = A.Call(t.loc, e, self.args())
                call.type_args = targs
                e = call
            else:
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


def parse(toks: list[Token]) -> A.Program:
    """Parse tokens into a Program."""
    return Parser(toks).program()
