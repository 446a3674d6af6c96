"""Machine checks of formal statements: the formal language, counterexample search, an SMT solver and a proof kernel."""
