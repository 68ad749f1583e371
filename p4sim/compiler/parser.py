"""Recursive-descent parser for P4_16 declarations (spec appendix grammar), typedef-aware."""

from __future__ import annotations

import logging

from p4sim.compiler import ast as A
from p4sim.compiler.errors import CompileError, Loc
from p4sim.compiler.lexer import Token
from p4sim.compiler.syntax import ExprParser

log = logging.getLogger(__name__)


class Parser(ExprParser):
    """Parses a token list into an ast.Program."""

    # ---- program -------------------------------------------------------------------
    def program(self) -> A.Program:
        """Parse the whole token list."""
        decls = []
        while self.tok.kind != "eof":
            if self.take(";"):
                continue
            decls.append(self.declaration())
        return A.Program(decls, self.tok.loc)

    def annotations(self) -> list[A.Annotation]:
        """Zero or more `@name(...)` annotations."""
        annos = []
        while self.at("@"):
            loc = self.expect("@").loc
            name = self.tok.text
            self.i += 1
            args: list = []
            quoted: dict[int, bool] = {}
            parens = self.at("(") and self.tok.adjacent
            if parens:
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
                        quoted[len(args)] = True
                        args.append(t.text)
                    elif t.kind == "int":
                        args.append(t.value)
                    elif not (t.kind == "op" and t.text == ","):
                        args.append(t.text)
            elif self.at("["):
                raise CompileError(loc, f"structured annotation @{name}[...] is not supported")
            annos.append(A.Annotation(name, args, loc, quoted, parens))
        return annos

    def declaration(self) -> object:
        """One top-level declaration."""
        annos = self.annotations()
        t = self.tok
        loc = t.loc
        if self.take("const"):
            return self.const_rest(loc, annos)
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
        """An instantiation `T(args) name;` or a function declaration."""
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
        """Optional `<A, B>` type parameters."""
        out: list[str] = []
        if self.take("<"):
            while True:
                out.append(self.ident("a type parameter"))
                if self.take(">"):
                    return out
                self.expect(",")
        return out

    def params(self) -> list[A.Param]:
        """A parenthesized parameter list."""
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
        """`extern Name<T> { ... }` or an extern function prototype."""
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
                    ret, mname, mtps, params = self.prototype("a method name")
                    methods.append(A.MethodDecl(mloc, mname, ma, ret, mtps, params, abstract))
                self.scoped.pop()
                return A.ExternDecl(loc, name, annos, tps, methods)
        self.i = save
        ret, fname, tps, params = self.prototype("a function name")
        return A.FunctionDecl(loc, fname, annos, ret, tps, params)

    def prototype(self, what: str) -> tuple[A.TypeSyn, str, list[str], list[A.Param]]:
        """`T name<T...>(params);` of an extern function or method: (return type, name, type parameters,
        parameters); the type parameters are in scope for the parameters only."""
        ret = self.type_()
        name = self.ident(what)
        tps = self.type_params()
        self.scoped.append(set(tps))
        params = self.params()
        self.scoped.pop()
        self.expect(";")
        return ret, name, tps, params

    def block_header(self, kind: str, annos: list[A.Annotation]) -> tuple:
        """`parser|control Name<T...>(params)`: (loc, name, type params, params, the prototype if `;` ends it).

        The type parameters stay in scope for the body unless the declaration was a prototype."""
        loc = self.expect(kind).loc
        name = self.ident()
        self.type_names.add(name)
        tps = self.type_params()
        self.scoped.append(set(tps))
        params = self.params()
        if self.take(";"):
            self.scoped.pop()
            return loc, name, tps, params, A.BlockTypeDecl(loc, name, annos, kind, tps, params)
        return loc, name, tps, params, None

    def parser_decl(self, annos: list[A.Annotation]) -> object:
        """A parser declaration or prototype."""
        loc, name, tps, params, proto = self.block_header("parser", annos)
        if proto is not None:
            return proto
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
        """A parser state with its transition."""
        loc = self.expect("state").loc
        name = self.ident("a state name")
        self.expect("{")
        stmts: list[A.Stmt] = []
        st = A.State(loc, name, annos, stmts)
        while not self.at("transition", "}"):
            stmts.append(self.statement())
        if self.at("}"):  # as p4c (CreateBuiltins): "implicit transition to `reject'", with its warning
            st.trans_loc = self.expect("}").loc
            log.warning("%s:%s: warning: state %s: implicit transition to `reject'", loc.file, loc.line, name)
            st.next = "reject"
            return st
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
        """A select case or entry keyset (a tuple or one simple keyset)."""
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
        """`default`, `_`, a value, `v &&& m` or `lo .. hi`."""
        loc = self.tok.loc
        if self.take("default"):
            return A.Default(loc)
        if self.tok.kind == "ident" and self.tok.text == "_":
            self.i += 1
            return A.Default(loc)
        e = self.expr()
        if self.take("&&&"):
            return A.Mask(loc, e, self.expr())
        if self.take(".."):
            return A.Range(loc, e, self.expr())
        return e

    def control_decl(self, annos: list[A.Annotation]) -> object:
        """A control declaration or prototype."""
        loc, name, tps, params, proto = self.block_header("control", annos)
        if proto is not None:
            return proto
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
        """A control or parser local: action, table, constant, instance or variable."""
        loc = self.tok.loc
        if self.at("action"):
            return self.action_decl(annos)
        if self.at("table"):
            return self.table_decl(annos)
        if self.take("const"):
            return self.const_rest(loc, annos)
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
        """An action declaration."""
        loc = self.expect("action").loc
        name = self.ident("an action name")
        params = self.params()
        return A.ActionDecl(loc, name, annos, params, self.block())

    def table_decl(self, annos: list[A.Annotation]) -> A.TableDecl:
        """A table declaration and its properties."""
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
                    ea += self.annotations()  # the grammar's entry annotations after the action (@priority)
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
        """An action reference in a table (name and optional arguments)."""
        loc = self.tok.loc
        name = self.ident("an action name")
        while self.take("."):
            name += "." + self.ident()
        args = self.args() if self.at("(") else []
        return A.ActionRef(name, args, annos, loc)



def parse(toks: list[Token]) -> A.Program:
    """Parse tokens into a Program."""
    return Parser(toks).program()
