"""The HTTP API (Starlette). Step 1 serves run status; the browser UI comes later."""
