# placeholder until the BM25 core lands
def compiled() -> bool:
    return True
