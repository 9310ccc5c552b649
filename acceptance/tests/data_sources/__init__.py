"""The data sources: offers, placement, availability, live prices, GPU models and commitment
sizing."""
