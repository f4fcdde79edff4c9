"""The stand-in's compile error, in Triton's message form: "at LINE:COL:" (LINE counted from
the kernel's `def`, COL in its dedented text), the source up to that line, a caret, the
error."""


class CompilationError(Exception):
    def __init__(self, src, node, error_message):
        self.src = src
        self.node = node
        self.error_message = error_message
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", 0)
        excerpt = "\n".join(src.split("\n")[:line][-12:]) if src else " <source unavailable>"
        self.message = "at %d:%d:\n%s\n%s^\n%s" % (line, col, excerpt, " " * col, error_message)
        super().__init__(self.message)

    def __str__(self):
        return self.message
