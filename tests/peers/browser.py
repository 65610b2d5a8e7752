#!/usr/bin/env python3
"""The browser of the OAuth tests ($BROWSER): opens the authorization URL it is given and follows
the redirects, as a person's browser does once they have signed in (the test authorization
servers grant at once), so that the redirect reaches the explorer's loopback listener.
Standard library only."""
import sys
import urllib.request

with urllib.request.urlopen(sys.argv[1], timeout=30) as page:
    page.read()
