"""The pre-generate discovery hint (docs/rules/search.md §12): `hook` decides, from a harness's
transcript, whether to remind the model to search before it calls an unverified function
(gates, the once-per-turn ledger, the injected message); `hint_text` holds the words. It ranks
nothing and imports nothing of search; `functions/hook.py` is its surface.
"""
