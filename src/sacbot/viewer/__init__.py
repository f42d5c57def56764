"""Watching battles: the web page (`static/`, served by `pages`), recordings in the official `.battle.gz`
format (`recording`: the arena's recorder; `reader`: reading one back) and clips drawn with Pillow (`render`:
the GIF/MP4 writer, over `scene`: a recording's ticks as frames, and `painter`: drawing one frame).

    from sacbot.viewer.recording import RecordingWriter
    from sacbot.viewer.reader import read_recording
    from sacbot.viewer.pages import ReplayServer, live_pages, replay_pages
    from sacbot.viewer.render import render_clip
"""
