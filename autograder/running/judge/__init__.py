"""The judge core: grade one notebook whose code runs in a confined worker (``core.judge``), the
worker's client and remote namespace, the sandbox and its cgroups, sandbox uids, the fork
server's client, the test cases of an autograder zip.
"""
