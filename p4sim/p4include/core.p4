/* core.p4 for the p4sim compiler: the P4_16 core library (P4_16 language specification,
 * appendix "core library"), written for p4sim. Declares the standard errors, match kinds,
 * packet_in/packet_out and the action NoAction. Its guard is p4c's: programs test `#ifdef _CORE_P4_`. */
#ifndef _CORE_P4_
#define _CORE_P4_

/* Errors raised by the parser primitives. */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/* Packet being parsed. */
extern packet_in {
    void extract<T>(out T hdr);
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    T lookahead<T>();
    void advance(in bit<32> sizeInBits);
    bit<32> length();
}

/* Packet being built by a deparser. */
extern packet_out {
    void emit<T>(in T hdr);
}

extern void verify(in bool check, in error toSignal);

/* The action that does nothing, used as the default of tables. */
@noWarn("unused")
action NoAction() {}

/* Match kinds of the core library. */
match_kind {
    exact,
    ternary,
    lpm
}

/* A condition checked at compile time (an error with the message when it is false); true otherwise. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  /* _CORE_P4_ */
