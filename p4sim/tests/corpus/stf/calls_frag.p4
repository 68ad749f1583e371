/* A fragment as p4c's own tests write them: it compiles to nothing unless core.p4 came first. */
#ifdef _CORE_P4_
header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
    bit<8> f;
}
#endif
