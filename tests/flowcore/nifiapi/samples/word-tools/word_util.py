# A helper module beside the processor, as NiFi's multi-module extensions have.
def count_words(text):
    return len(text.split())
