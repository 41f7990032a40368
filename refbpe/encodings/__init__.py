"""tiktoken's layer: named encodings on refbpe's own engine.

    ``api``       ``Encoding``, ``get_encoding``, ``list_encoding_names``: tiktoken's API
    ``registry``  the named encodings (``gpt2``, ``cl100k_base``, ...) and where their files are found
    ``cache``     tiktoken's cache directory, read and written as tiktoken does
    ``models``    which encoding an OpenAI model uses (``encoding_for_model``)

The package imports nothing up front; import the module you need.
"""
