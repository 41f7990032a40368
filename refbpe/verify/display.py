"""How verify shows bytes and pairs to a reader (and in its JSON)."""

__all__ = ["show", "show_pair", "pair_json"]


def show(b):
    """Bytes shown readably: the str repr when valid UTF-8, else the bytes repr."""
    try:
        return repr(b.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(b)


def show_pair(pair):
    return "(%s, %s)" % (show(pair[0]), show(pair[1]))


def pair_json(pair):
    return {"left": pair[0].hex(), "right": pair[1].hex(), "text": show_pair(pair)}
