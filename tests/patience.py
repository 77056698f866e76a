"""How long tests wait for real work.

Tests talk to real servers on a machine that may be busy (a loaded CI runner took minutes per
llama.cpp call). A test must never fail because the machine is slow, so waits for real work are
far above any realistic time. Tests *of* timeouts use their own small values against a proxy that
hangs on purpose.
"""

PATIENT_S = 3600.0
# Model options for a backend talking to a real (possibly slow) server.
PATIENT = {"timeout": PATIENT_S, "deadline": 2 * PATIENT_S}
# The same as `convoscope judge` options.
PATIENT_ARGS = ["--timeout", str(PATIENT_S), "--deadline", str(2 * PATIENT_S)]
