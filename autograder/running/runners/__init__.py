"""The runners: the ``Runner`` interface (``base``), every runner by name (``registry``), and one
module a runner: ``sealed``, ``otter``, ``docker`` (``docker-gpu`` too), ``docker_fork`` and
``pod``, with what the Docker ones share (``docker_engine``, and their base ``container``).
"""
