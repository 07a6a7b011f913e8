"""Code that runs inside the sandbox: the zygote, the test harness and the solution server.

Only the standard library is imported here, and nothing from the rest of selfplay: this
directory is the one piece of the project the sandbox can see.
"""
