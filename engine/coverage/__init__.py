"""Where rules fire over a corpus: collection and the HTML/text report."""
