"""The messages the runner exchanges with kforge, checked against runner/protocol.json (the one
definition both sides read; kforge compiles the same file in: src/common/protocol.h).

Every service checks each request it receives before dispatching it (an unknown op, an unknown
field, a missing field or a wrong type is an error reply that names the op and the field).
Replies are checked too when KFORGE_PROTOCOL_CHECK=1 (tests, and kforge's debug builds set it):
kforge checks every reply it receives anyway.
"""
import json
import os

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "protocol.json")

with open(SCHEMA_PATH) as _f:
    SCHEMA = json.load(_f)

VERSION = SCHEMA["version"]
CHECK_REPLIES = os.environ.get("KFORGE_PROTOCOL_CHECK") == "1"

_SIMPLE = {
    "string": lambda v: isinstance(v, str),
    # bool is an int in Python, never in JSON.
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
    "any": lambda v: True,
}


def _is(value, type_name):
    for alt in type_name.split("|"):
        if alt.startswith("array<") and alt.endswith(">"):
            item = alt[len("array<"):-1]
            if isinstance(value, list) and all(_is(v, item) for v in value):
                return True
        elif _SIMPLE[alt](value):
            return True
    return False


def _type_of(value):
    for name in ("boolean", "integer", "number", "string", "object", "array", "null"):
        if _SIMPLE[name](value):
            return name
    return type(value).__name__


def check_fields(fields, msg, what, skip=()):
    """None if `msg` has exactly the fields `fields` allows (besides `skip`), else the first
    problem, naming `what` (e.g. "judge 'prepare' request") and the field."""
    for name, spec in fields.items():
        optional = spec.endswith("?")
        type_name = spec.rstrip("?")
        if name not in msg:
            if not optional:
                return "%s: missing required field '%s'" % (what, name)
            continue
        if not _is(msg[name], type_name):
            return "%s: field '%s' must be %s, not %s" % (what, name, type_name,
                                                         _type_of(msg[name]))
    for name in msg:
        if name not in fields and name not in skip:
            return "%s: unknown field '%s'" % (what, name)
    return None


def ops(service):
    return SCHEMA["services"][service]["ops"]


def check_request(service, msg):
    """None, or why `msg` is not a request `service` accepts."""
    if not isinstance(msg, dict):
        return "%s request: not a JSON object" % service
    op = msg.get("op")
    if not isinstance(op, str):
        return "%s request: missing required field 'op'" % service
    spec = ops(service).get(op)
    if spec is None:
        return "%s request: unknown op '%s'" % (service, op)
    if op == "hello" and msg.get("protocol") != VERSION:
        return "%s 'hello' request: field 'protocol': %s" % (service, hello_version(msg))
    return check_fields(spec["request"], msg, "%s '%s' request" % (service, op), skip=("op",))


def _check_answer(service, spec, name, reply, kind):
    what = "%s '%s' %s" % (service, name, kind)
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        return "%s: missing required field 'ok'" % what
    if reply["ok"]:
        fields = spec["reply"]
    else:
        fields = spec.get("failure", SCHEMA["services"][service]["error"])
    return check_fields(fields, reply, what, skip=("ok",))


def check_reply(service, op, reply):
    """None, or why `reply` is not a reply `service` may give to `op`."""
    return _check_answer(service, ops(service)[op], op, reply, "reply")


def check_event_reply(service, event, reply):
    """None, or why kforge's answer to an event the runner sent breaks the protocol."""
    return _check_answer(service, SCHEMA["services"][service]["events"][event], event, reply,
                         "event reply")


def send_event(chan, service, event, fields):
    """Sends `service`'s `event` to kforge while answering a request, and waits for its answer:
    (answer, None), or (answer, why the answer breaks the protocol)."""
    chan.send(dict(fields, event=event))
    answer = chan.recv()
    return answer, check_event_reply(service, event, answer)


def checked(service, op, reply):
    """`reply`, or (with KFORGE_PROTOCOL_CHECK=1) an error reply saying how it breaks the
    protocol: a runner bug shows where it is made, not as kforge's rejection of it."""
    if CHECK_REPLIES and op in ops(service):
        why = check_reply(service, op, reply)
        if why is not None:
            return error_reply(service, "the runner broke the protocol: " + why)
    return reply


def error_reply(service, message):
    """An error reply of `service` that blames the runner, not the candidate."""
    if service == "candidate":
        return {"ok": False, "kind": "internal", "message": message}
    return {"ok": False, "message": message}


def hello_version(msg):
    """None, or why a hello from this kforge cannot be served by this runner."""
    theirs = msg.get("protocol")
    if theirs == VERSION:
        return None
    return ("protocol version mismatch: kforge speaks %s, this runner speaks %s (%s): run "
            "the kforge built from this runner's checkout, or point it at its own runner "
            "(KFORGE_RUNNER_DIR)" % (theirs, VERSION, SCHEMA_PATH))
