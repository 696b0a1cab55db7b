"""The pieces of ``protocoder serve`` (:mod:`protocoder.tui.serve`), one idea each.

* :mod:`.access`: who may reach a server without a team: loopback names and access tokens.
* :mod:`.pages`: the HTML the server writes itself (the sign-in page, the script added to the terminal page).
* :mod:`.signin`: a team's members: sign-in links, session cookies, revocation and expiry.
* :mod:`.sessions`: browser sessions: one app process per websocket, relayed until either side closes.
* :mod:`.limits`: what one client may cost: terminal size, sessions per member and in all, sign-in attempts.
* :mod:`.server`: the aiohttp server that joins them: the checks on every request, the routes, running.
"""
