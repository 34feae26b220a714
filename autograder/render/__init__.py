"""Rendering for people: the feedback page with the hidden tests stripped, safe HTML, MathML."""
