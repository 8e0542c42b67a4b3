"""The single source of the project's version: the JAR's build reads it from here too."""

__version__ = "0.1.0"
