"""Small private helpers the stages share; not part of the API.

``atomic``   files written atomically
``lists``    an empty list with room reserved (PyPy), for the scanners and the encoder
``quoting``  user bytes in an error message, escaped and short
"""
