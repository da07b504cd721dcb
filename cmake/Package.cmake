# Installing and packaging Headroom like a desktop program.
#
# `cmake --install build --prefix P` lays out
#   P/bin/headroom
#   P/share/headroom/translations/headroom_<lang>.qm        (the window and CLI look here first)
#   P/share/applications/io.headroom.Headroom.desktop
#   P/share/icons/hicolor/{scalable,16x16,...,256x256}/apps/io.headroom.Headroom.{svg,png}
#   P/share/metainfo/io.headroom.Headroom.metainfo.xml     (AppStream)
#   P/share/man/man1/headroom.1.gz                          (made from the program's --help)
#   P/lib/headroom/libheadroom_cuda.so                      (component "cuda", when the build has it)
# The build tree mirrors the share/ part next to the binary (build/share/...), so the program finds
# the same files relative to itself in both (app/gui/Installation.h).
#
# CPack makes two Debian packages (scripts/package): `headroom`, whose dependencies dpkg-shlibdeps
# computes from the binary (Debian packages only) plus what the program loads at run time, and
# `headroom-cuda` with the CUDA backend module. CUDA is not a Debian package: headroom-cuda needs the
# CUDA 13 runtime, cuBLAS 13 and cuDNN 9 from NVIDIA's installers (docs/install.md), and leaves them
# out of its dependencies.
include(GNUInstallDirs)
# Installing (and cpack) takes what the build made; it does not rebuild the whole tree first (that
# check alone takes longer than packaging). Build, then install or package: scripts/package does both.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(HEADROOM_APP_ID "io.headroom.Headroom")
set(HEADROOM_MODULE_DIR "lib/headroom" CACHE STRING "where the CUDA backend module is installed, relative to the prefix")
set(HEADROOM_PACKAGE_MAINTAINER "The Headroom developers <maintainers@headroom.invalid>" CACHE STRING
    "the Maintainer field of the Debian packages (set it for a release)")
set(_hr_share "${CMAKE_BINARY_DIR}/share")
set(_hr_icon_sizes 16 24 32 48 64 128 256)

# ---- files made at build time, where an installation has them (build/share/...) -----------------
add_executable(headroom_render_icon ${CMAKE_SOURCE_DIR}/resources/render_icon.cpp)
target_link_libraries(headroom_render_icon PRIVATE Qt6::Gui Qt6::Svg)
set(_hr_svg "${CMAKE_SOURCE_DIR}/resources/icons/${HEADROOM_APP_ID}.svg")
set(_hr_pngs)
foreach(size IN LISTS _hr_icon_sizes)
  list(APPEND _hr_pngs "${_hr_share}/icons/hicolor/${size}x${size}/apps/${HEADROOM_APP_ID}.png")
endforeach()
add_custom_command(OUTPUT ${_hr_pngs} "${_hr_share}/icons/hicolor/scalable/apps/${HEADROOM_APP_ID}.svg"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${_hr_share}/icons/hicolor/scalable/apps"
  COMMAND ${CMAKE_COMMAND} -E copy "${_hr_svg}" "${_hr_share}/icons/hicolor/scalable/apps/"
  COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen
          $<TARGET_FILE:headroom_render_icon> "${_hr_svg}" "${_hr_share}/icons/hicolor" ${HEADROOM_APP_ID} ${_hr_icon_sizes}
  DEPENDS headroom_render_icon "${_hr_svg}"
  COMMENT "Rendering the icon (${_hr_icon_sizes} px)"
  VERBATIM)
set(_hr_man "${_hr_share}/man/man1/headroom.1")
add_custom_command(OUTPUT "${_hr_man}.gz"
  COMMAND ${CMAKE_COMMAND} -DHEADROOM=$<TARGET_FILE:headroom> -DVERSION=${PROJECT_VERSION} -DOUT=${_hr_man}
          -P ${CMAKE_SOURCE_DIR}/cmake/ManPage.cmake
  COMMAND gzip -n -9 -f "${_hr_man}"
  DEPENDS headroom ${CMAKE_SOURCE_DIR}/cmake/ManPage.cmake
  COMMENT "Writing headroom(1) from --help"
  VERBATIM)
add_custom_target(headroom_share ALL DEPENDS ${_hr_pngs} "${_hr_man}.gz")

# ---- installation -------------------------------------------------------------------------------
# both programs: the window (with the command line) and headroom-cli (the command line, no widgets)
install(TARGETS headroom headroom-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT headroom)
get_property(_hr_qm GLOBAL PROPERTY HEADROOM_QM_FILES)
install(FILES ${_hr_qm} DESTINATION ${CMAKE_INSTALL_DATADIR}/headroom/translations COMPONENT headroom)
install(FILES ${CMAKE_SOURCE_DIR}/resources/${HEADROOM_APP_ID}.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT headroom)
install(FILES ${CMAKE_SOURCE_DIR}/resources/${HEADROOM_APP_ID}.metainfo.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo COMPONENT headroom)
install(FILES "${_hr_svg}" DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT headroom)
foreach(size IN LISTS _hr_icon_sizes)
  install(FILES "${_hr_share}/icons/hicolor/${size}x${size}/apps/${HEADROOM_APP_ID}.png"
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps COMPONENT headroom)
endforeach()
install(FILES "${_hr_man}.gz" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT headroom)
set(_hr_components headroom)
if(TARGET headroom_cuda)
  install(TARGETS headroom_cuda LIBRARY DESTINATION ${HEADROOM_MODULE_DIR} COMPONENT cuda)
  list(APPEND _hr_components cuda)
endif()

# ---- Debian packages ----------------------------------------------------------------------------
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "headroom")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "The Headroom developers")
set(CPACK_PACKAGE_CONTACT "${HEADROOM_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DIRECTORY "${CMAKE_BINARY_DIR}/packages")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${_hr_components})
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # libraries not from a Debian package (CUDA's) are left out
set(CPACK_DEBIAN_HEADROOM_PACKAGE_NAME "headroom")
set(CPACK_DEBIAN_HEADROOM_PACKAGE_SECTION "science")
# Loaded at run time, so dpkg-shlibdeps cannot see them: OpenBLAS (dlopen, core/backend/cpu/blas.cpp)
# and Qt's SQLite driver (the run history).
set(CPACK_DEBIAN_HEADROOM_PACKAGE_DEPENDS "libopenblas0 | libopenblas0-pthread, libqt6sql6-sqlite")
set(CPACK_DEBIAN_HEADROOM_PACKAGE_RECOMMENDS "fonts-noto-cjk")
set(CPACK_DEBIAN_HEADROOM_PACKAGE_SUGGESTS "headroom-cuda, dataset-fashion-mnist")
set(CPACK_COMPONENT_HEADROOM_DESCRIPTION
    "workbench for training neural networks within GPU memory
 Headroom assembles a model, picks memory strategies (mixed precision, activation
 checkpointing, gradient accumulation, optimizer offload) and predicts before the
 start how much memory a run takes and why; then it trains on a background thread
 while the window shows loss, memory by category, power and utilisation, and
 writes reports (HTML, PDF, JSON, CSV). It also trains headless from the command
 line. Without a GPU it trains on the CPU; install headroom-cuda for NVIDIA GPUs.")
set(CPACK_DEBIAN_CUDA_PACKAGE_NAME "headroom-cuda")
set(CPACK_DEBIAN_CUDA_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS "headroom (= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_CUDA_DESCRIPTION
    "Headroom's CUDA backend for NVIDIA GPUs
 The module headroom loads at run time to train on NVIDIA GPUs (cuBLAS, cuDNN and
 Headroom's own kernels). It needs the CUDA 13 runtime, cuBLAS 13 and cuDNN 9,
 which are not Debian packages: install them from NVIDIA (docs/install.md in
 Headroom's sources says how); `headroom devices` says what is missing.")
include(CPack)
