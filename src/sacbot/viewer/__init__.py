"""Watching battles: the web page (`static/`, served by `pages`), recordings in the official `.battle.gz`
format (`recording`: the arena's recorder and the reader) and clips drawn with Pillow (`render`).

    from sacbot.viewer.recording import RecordingWriter, read_recording
    from sacbot.viewer.pages import ReplayServer, live_pages, replay_pages
    from sacbot.viewer.render import render_clip
"""
