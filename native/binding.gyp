{
  "targets": [
    {
      "target_name": "magi_native",
      "sources": ["magi_native.c"],
      "cflags": ["-std=c11", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"]
    }
  ]
}
